package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/client"
	"github.com/urfave/cli/v2"
)

// provisionVerb is one provisioning command: the verb it sends (the 1.1
// spelling where one exists, so it works at any negotiated version) and
// the stable state --wait waits for ("" when waiting makes no sense).
type provisionVerb struct {
	name, verb, waitFor, about string
	flags                      []cli.Flag
	body                       func(c *cli.Context) (client.ProvisionRequest, error)
}

func provisionCommands() []*cli.Command {
	configDrive := &cli.StringFlag{Name: "config-drive", Usage: "config drive `URL` or gzipped, base64 ISO"}
	withDrive := func(verb string) func(c *cli.Context) (client.ProvisionRequest, error) {
		return func(c *cli.Context) (client.ProvisionRequest, error) {
			r := client.ProvisionRequest{Target: verb}
			if d := c.String("config-drive"); d != "" {
				r.ConfigDrive = d
			}
			return r, nil
		}
	}
	verbs := []provisionVerb{
		{name: "manage", verb: client.VerbManage, waitFor: "manageable", about: "verify nodes and make them manageable (API 1.4)"},
		{name: "provide", verb: client.VerbProvide, waitFor: "available", about: "clean manageable nodes and make them available (API 1.4)"},
		{name: "deploy", verb: client.VerbDeploy, waitFor: "active", about: "deploy available nodes (target \"active\")", flags: []cli.Flag{configDrive}, body: withDrive(client.VerbDeploy)},
		{name: "undeploy", verb: client.VerbUndeploy, waitFor: "available", about: "tear down deployed nodes (target \"deleted\")"},
		{name: "rebuild", verb: client.VerbRebuild, waitFor: "active", about: "redeploy active nodes", flags: []cli.Flag{configDrive}, body: withDrive(client.VerbRebuild)},
		{name: "inspect", verb: client.VerbInspect, waitFor: "manageable", about: "inspect manageable nodes' hardware (API 1.6)"},
		{name: "clean", verb: client.VerbClean, waitFor: "manageable", about: "run manual clean steps on manageable nodes (API 1.15)",
			flags: []cli.Flag{&cli.StringFlag{Name: "clean-steps", Usage: "clean steps as a JSON list, @FILE, or - for stdin (required)"}},
			body:  cleanStepsBody},
		{name: "service", verb: client.VerbService, waitFor: "active", about: "run service steps on active nodes (API 1.87)",
			flags: []cli.Flag{&cli.StringFlag{Name: "service-steps", Usage: "service steps as a JSON list, @FILE, or - for stdin (required)"},
				&cli.BoolFlag{Name: "disable-ramdisk", Usage: "do not boot the ramdisk (API 1.108)"}},
			body: serviceStepsBody},
		{name: "adopt", verb: client.VerbAdopt, waitFor: "active", about: "adopt manageable nodes already running a workload (API 1.17)"},
		{name: "abort", verb: client.VerbAbort, about: "abort cleaning or inspection waiting on a ramdisk (API 1.13)"},
	}
	cmds := make([]*cli.Command, 0, len(verbs))
	for _, v := range verbs {
		cmds = append(cmds, v.command())
	}
	return cmds
}

// timingFlags bound and pace a wait.
func timingFlags() []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "timeout", Value: client.DefaultWaitTimeout, Usage: "give up waiting after this long"},
		&cli.DurationFlag{Name: "interval", Value: client.DefaultWaitInterval, Usage: "pause between polls"},
	}
}

func (v provisionVerb) command() *cli.Command {
	usageText := v.about
	if v.waitFor != "" {
		usageText += "; --wait waits for " + v.waitFor
	}
	flags := slices.Concat(v.flags, []cli.Flag{concurrencyFlag()})
	if v.waitFor != "" {
		flags = slices.Concat(flags, []cli.Flag{&cli.BoolFlag{Name: "wait", Usage: "wait until each node is " + v.waitFor}}, timingFlags())
	}
	return clientLeaf(v.name, usageText, "NODE…", flags, func(c *cli.Context, api *client.Client) error {
		req := client.ProvisionRequest{Target: v.verb}
		if v.body != nil {
			var err error
			if req, err = v.body(c); err != nil {
				return err
			}
		}
		wait := v.waitFor != "" && c.Bool("wait")
		var rep waitReporter
		var finish func()
		if wait {
			rep = newWaitReporter(c.App.ErrWriter, v.waitFor)
			finish = rep.stop
		}
		return runBulk(c, api, client.Nodes, func(ctx context.Context, ident string) (string, error) {
			if err := api.SetProvisionState(ctx, ident, req); err != nil {
				return "", err
			}
			if !wait {
				return fmt.Sprintf("node %s: %s requested", ident, v.name), nil
			}
			return waitOneNode(ctx, c, api, rep, ident, v.waitFor)
		}, finish)
	})
}

// waitOneNode waits for one node and reports it.
func waitOneNode(ctx context.Context, c *cli.Context, api *client.Client, rep waitReporter, ident, state string) (string, error) {
	st, err := api.WaitForProvisionState(ctx, ident, client.WaitOptions{
		Target: state, Timeout: c.Duration("timeout"), Interval: c.Duration("interval"),
		OnPoll: func(s client.Resource) { rep.poll(ident, s) },
	})
	rep.done(ident, err)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("node %s: %s", ident, st.String("provision_state")), nil
}

func waitCommand() *cli.Command {
	flags := slices.Concat([]cli.Flag{&cli.StringFlag{Name: "state", Usage: "provision `STATE` to wait for (required)"}, concurrencyFlag()}, timingFlags())
	return clientLeaf("wait", "wait until nodes reach a provision state; a failure state or a timeout ends it", "NODE…", flags,
		func(c *cli.Context, api *client.Client) error {
			state := c.String("state")
			if state == "" {
				return clientUsage(c, "give --state (e.g. active, available, manageable)")
			}
			rep := newWaitReporter(c.App.ErrWriter, state)
			return runBulk(c, api, client.Nodes, func(ctx context.Context, ident string) (string, error) {
				return waitOneNode(ctx, c, api, rep, ident, state)
			}, rep.stop)
		})
}

// cleanStepsBody reads --clean-steps: JSON, @FILE or - (stdin).
func cleanStepsBody(c *cli.Context) (client.ProvisionRequest, error) {
	raw := c.String("clean-steps")
	if raw == "" {
		return client.ProvisionRequest{}, clientUsage(c, "clean needs --clean-steps, e.g. '[{\"interface\": \"deploy\", \"step\": \"erase_devices\"}]'")
	}
	steps, err := stepsArg(c, "--clean-steps", raw)
	if err != nil {
		return client.ProvisionRequest{}, err
	}
	return client.ProvisionRequest{Target: client.VerbClean, CleanSteps: steps}, nil
}

// serviceStepsBody is the service verb's body: --service-steps and
// --disable-ramdisk.
func serviceStepsBody(c *cli.Context) (client.ProvisionRequest, error) {
	raw := c.String("service-steps")
	if raw == "" {
		return client.ProvisionRequest{}, clientUsage(c, "service needs --service-steps, e.g. '[{\"interface\": \"raid\", \"step\": \"delete_configuration\"}]'")
	}
	steps, err := stepsArg(c, "--service-steps", raw)
	if err != nil {
		return client.ProvisionRequest{}, err
	}
	req := client.ProvisionRequest{Target: client.VerbService, ServiceSteps: steps}
	if c.IsSet("disable-ramdisk") {
		v := c.Bool("disable-ramdisk")
		req.DisableRamdisk = &v
	}
	return req, nil
}

// stepsArg reads a JSON list of steps given inline, as @FILE or as - (stdin).
func stepsArg(c *cli.Context, flag, raw string) ([]map[string]any, error) {
	data := []byte(raw)
	var err error
	switch {
	case raw == "-":
		data, err = io.ReadAll(os.Stdin)
	case strings.HasPrefix(raw, "@"):
		data, err = os.ReadFile(raw[1:])
	}
	if err != nil {
		return nil, cli.Exit(flag+": "+err.Error(), exitClientUsage)
	}
	var steps []map[string]any
	if err := json.Unmarshal(data, &steps); err != nil {
		return nil, cli.Exit(flag+": want a JSON list of steps: "+err.Error(), exitClientUsage)
	}
	return steps, nil
}
