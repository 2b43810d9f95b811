package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/client"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// The admin client's connection flags. They are declared on every client
// command (node, node list, …) so they may stand anywhere after the
// resource noun; the innermost explicit one wins, then the environment,
// then the default. Their EnvVars are resolved here, not by urfave, so that
// a parent's explicit flag is not shadowed by a child's environment value.
const (
	flagURL            = "url"
	flagAPIVersion     = "api-version"
	flagUsername       = "username"
	flagPassword       = "password"
	flagDebug          = "debug"
	flagRequestTimeout = "request-timeout"
	flagRetries        = "retries"
	flagFormat         = "format"
	flagFields         = "fields"
)

// defaultRetries with client.DefaultRetryInterval rides out a node lock of
// a few seconds, as python-ironicclient does.
const defaultRetries = 3

// clientEnv maps a connection flag to its environment variable.
var clientEnv = map[string]string{
	flagURL:        "RIVET_URL",
	flagAPIVersion: "RIVET_API_VERSION",
	flagUsername:   "RIVET_USERNAME",
	flagPassword:   "RIVET_PASSWORD",
	flagDebug:      "RIVET_DEBUG",
}

func connFlags() []cli.Flag {
	const cat = "Connection"
	return []cli.Flag{
		&cli.StringFlag{Category: cat, Name: flagURL, Usage: "API `URL`, with or without /v1 (env RIVET_URL; default " + client.DefaultURL + ")"},
		&cli.StringFlag{Category: cat, Name: flagAPIVersion, Usage: "API microversion `X.Y` or latest; never changed by negotiation (env RIVET_API_VERSION; default: negotiate, starting at " + client.MaxVersion.String() + ")"},
		&cli.StringFlag{Category: cat, Name: flagUsername, Usage: "http_basic `USER` (env RIVET_USERNAME)"},
		&cli.StringFlag{Category: cat, Name: flagPassword, Usage: "http_basic `PASSWORD` (env RIVET_PASSWORD; prompted without echo on a terminal when a user is set)"},
		&cli.BoolFlag{Category: cat, Name: flagDebug, Usage: "log each request (method, path, status, versions, request id) to stderr (env RIVET_DEBUG)"},
		&cli.DurationFlag{Category: cat, Name: flagRequestTimeout, Usage: "bound each HTTP request", Value: client.DefaultTimeout},
		&cli.IntFlag{Category: cat, Name: flagRetries, Usage: "send a request again up to `N` times when the API says to retry (503, node locked)", Value: defaultRetries},
	}
}

func outputFlags() []cli.Flag {
	const cat = "Output"
	return []cli.Flag{
		&cli.StringFlag{Category: cat, Name: flagFormat, Aliases: []string{"f"}, Value: "table", Usage: "output `FORMAT`: table, json, yaml or value (bare values, one per line)"},
		&cli.StringFlag{Category: cat, Name: flagFields, Usage: "show only these comma-separated `FIELDS`, in this order"},
	}
}

// clientSetting resolves a client flag: the innermost explicit flag, then its
// environment variable if not empty, then def.
func clientSetting(c *cli.Context, name, def string) string {
	for _, ctx := range c.Lineage() {
		if slices.Contains(ctx.LocalFlagNames(), name) {
			return fmt.Sprint(ctx.Value(name))
		}
	}
	if env, ok := clientEnv[name]; ok {
		if v := os.Getenv(env); v != "" {
			return v
		}
	}
	return def
}

// newAPIClient builds the client from the flags. An invalid version or URL
// fails here, before any request (use case 4).
func newAPIClient(c *cli.Context) (*client.Client, error) {
	req, err := client.ParseRequest(clientSetting(c, flagAPIVersion, ""))
	if err != nil {
		return nil, cli.Exit(err.Error()+" (fix --api-version or RIVET_API_VERSION)", exitClientUsage)
	}
	timeout, err := time.ParseDuration(clientSetting(c, flagRequestTimeout, client.DefaultTimeout.String()))
	if err != nil {
		return nil, cli.Exit("invalid --request-timeout: "+err.Error(), exitClientUsage)
	}
	retries, err := strconv.Atoi(clientSetting(c, flagRetries, strconv.Itoa(defaultRetries)))
	if err != nil || retries < 0 {
		return nil, cli.Exit("invalid --retries: want a whole number ≥ 0", exitClientUsage)
	}
	opts := client.Options{URL: clientSetting(c, flagURL, client.DefaultURL), Version: req, Timeout: timeout, Retries: retries,
		Username: clientSetting(c, flagUsername, ""), Password: clientSetting(c, flagPassword, ""), UserAgent: "rivet-cli"}
	if opts.Username != "" && opts.Password == "" {
		if opts.Password, err = promptPassword(c.App.ErrWriter, opts.Username); err != nil {
			return nil, cli.Exit(err.Error(), exitClientUsage)
		}
	}
	if d := clientSetting(c, flagDebug, "false"); d == "true" || d == "1" {
		opts.Logger = slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if path, err := client.DefaultCachePath(); err == nil {
		opts.Cache = client.NewFileCache(path, client.DefaultCacheTTL, nil)
	}
	cl, err := client.New(opts)
	if err != nil {
		return nil, cli.Exit(err.Error()+" (fix --url or RIVET_URL)", exitClientUsage)
	}
	return cl, nil
}

// promptPassword reads the password without echo when stdin is a terminal;
// otherwise the user is told where to put it.
func promptPassword(w io.Writer, user string) (string, error) {
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
		return "", fmt.Errorf("user %q has no password: set --password or RIVET_PASSWORD", user)
	}
	fmt.Fprintf(w, "Password for %s: ", user)
	b, err := term.ReadPassword(fd)
	fmt.Fprintln(w)
	if err != nil {
		return "", fmt.Errorf("read password: %v", err)
	}
	return string(b), nil
}

// interleaved wraps a leaf action so that flags after positional arguments
// count, as in `rivet node show NODE --fields uuid,name`: urfave (like Go's
// flag package) stops parsing at the first positional argument. The
// remaining arguments are parsed again, flags first, into a fresh context
// that keeps the flags already parsed.
func interleaved(fn cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		rest := c.Args().Slice()
		if !slices.ContainsFunc(rest, isFlagArg) {
			return fn(c)
		}
		set := flag.NewFlagSet(c.Command.Name, flag.ContinueOnError)
		set.SetOutput(io.Discard)
		for _, f := range c.Command.Flags {
			if err := f.Apply(set); err != nil {
				return err
			}
		}
		for _, name := range c.LocalFlagNames() {
			if set.Lookup(name) != nil {
				_ = set.Set(name, fmt.Sprint(c.Value(name)))
			}
		}
		flags, pos := splitInterleavedArgs(set, canonicalFlagNames(c.Command.Flags), rest)
		if err := set.Parse(append(append(flags, "--"), pos...)); err != nil {
			return cli.Exit(fmt.Sprintf("%v (see rivet %s --help)", err, strings.Join(clientCommandPath(c), " ")), exitClientUsage)
		}
		var parent *cli.Context
		if l := c.Lineage(); len(l) > 1 {
			parent = l[1]
		}
		nc := cli.NewContext(c.App, set, parent)
		nc.Command = c.Command
		return fn(nc)
	}
}

func isFlagArg(s string) bool { return len(s) > 1 && s[0] == '-' && s != "--" }

// canonicalFlagNames maps every flag name and alias to the flag's first name.
func canonicalFlagNames(fl []cli.Flag) map[string]string {
	m := map[string]string{}
	for _, f := range fl {
		names := f.Names()
		for _, n := range names {
			m[n] = names[0]
		}
	}
	return m
}

// splitInterleavedArgs separates flags (with their values) from positional arguments
// and spells each flag by its canonical name, since urfave's alias
// normalisation does not run on a flag set parsed here.
func splitInterleavedArgs(set *flag.FlagSet, canon map[string]string, args []string) (flags, pos []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return flags, append(pos, args[i+1:]...)
		}
		if !isFlagArg(a) {
			pos = append(pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if c, ok := canon[name]; ok {
			name = c
		}
		if hasVal {
			flags = append(flags, "--"+name+"="+val)
			continue
		}
		flags = append(flags, "--"+name)
		f := set.Lookup(name)
		if f == nil {
			continue
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return flags, pos
}

// clientCommandPath is the command names from the root, without "rivet".
func clientCommandPath(c *cli.Context) []string {
	var names []string
	for _, ctx := range c.Lineage() {
		if ctx.Command != nil && ctx.Command.Name != "" && ctx.Command.Name != c.App.Name {
			names = append([]string{ctx.Command.Name}, names...)
		}
	}
	return names
}
