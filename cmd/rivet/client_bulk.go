package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/rivetmetal/rivet/core/client"
	"github.com/urfave/cli/v2"
)

// defaultConcurrency bounds how many objects a bulk command works on at
// once: enough to overlap slow BMCs, few enough not to flood the API.
const defaultConcurrency = 8

func concurrencyFlag() cli.Flag {
	return &cli.IntFlag{Name: "concurrency", Value: defaultConcurrency, Usage: "act on at most `N` objects at once"}
}

// runBulk runs fn for every ident argument, at most --concurrency at once,
// and reports each result in argument order: successes on stdout, failures
// on stderr. One ident gives its error as is; several give a summary and
// the exit code of the first failure. finish, if not nil, runs once all
// are done and before anything is printed (to stop a progress display).
func runBulk(c *cli.Context, api *client.Client, kind client.Kind, fn func(ctx context.Context, ident string) (string, error), finish func()) error {
	idents := c.Args().Slice()
	if len(idents) == 0 {
		return clientUsage(c, "give at least one %s (UUID or name)", kind.Noun)
	}
	if len(idents) > 1 {
		// Settle the version once rather than in every goroutine.
		if err := api.Negotiate(c.Context); err != nil {
			return cliError(err, clientTarget{kind: kind})
		}
	}
	n := c.Int("concurrency")
	if n < 1 {
		n = 1
	}
	type result struct {
		msg string
		err error
	}
	results := make([]result, len(idents))
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, ident := range idents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			msg, err := fn(c.Context, ident)
			results[i] = result{msg, err}
		}()
	}
	wg.Wait()
	if finish != nil {
		finish()
	}
	var failed int
	var first error
	for i, r := range results {
		if r.err != nil {
			err := cliError(r.err, clientTarget{kind, idents[i]})
			if len(idents) == 1 {
				return err
			}
			fmt.Fprintln(c.App.ErrWriter, "rivet: "+err.Error())
			if failed++; first == nil {
				first = err
			}
			continue
		}
		if r.msg != "" {
			fmt.Fprintln(c.App.Writer, r.msg)
		}
	}
	if failed > 0 {
		return cli.Exit(fmt.Sprintf("%d of %d %s failed (see above)", failed, len(idents), kind.Path), clientExitCode(first))
	}
	return nil
}
