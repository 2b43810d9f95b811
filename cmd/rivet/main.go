// Command rivet is Rivet's single admin and server binary: the services
// (api, conductor, all-in-one, dev), database management (dbsync) and the
// admin client. Run `rivet --help` for the commands.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/urfave/cli/v2"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// run executes the CLI and turns every error into one line on stderr and an
// exit code: the code an ExitCoder carries, or 1. No stack traces.
func run(args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	err := app.Run(args)
	if err == nil {
		return 0
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(stderr, "rivet: "+msg)
		}
		return ec.ExitCode()
	}
	fmt.Fprintln(stderr, "rivet: "+err.Error())
	return 1
}

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:                 "rivet",
		Usage:                "bare-metal provisioning with zero-downtime rolling upgrades",
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,
		Suggest:              true,
		HideVersion:          true,
		// Errors are printed once, by run; urfave must not exit on its own.
		ExitErrHandler: func(*cli.Context, error) {},
		Flags:          globalFlags(),
		Commands:       withConfigFileFlag(commands()),
	}
}

// clientNouns are the admin client's commands and the file tools: they read
// no configuration file (the client's connection flags are declared on
// every one of them instead).
var clientNouns = []string{"node", "port", "portgroup", "chassis", "driver", "completion", "htpasswd"}

// withConfigFileFlag declares --config-file on every command and
// subcommand that reads the configuration, so that it may stand after the
// command (`rivet dbsync upgrade --config-file F`, as ironic-dbsync takes
// it) as well as before it; configFiles collects every level's, outermost
// first.
func withConfigFileFlag(cmds []*cli.Command) []*cli.Command {
	var walk func(*cli.Command)
	walk = func(c *cli.Command) {
		if !slices.ContainsFunc(c.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), flagConfigFile) }) {
			c.Flags = append(c.Flags, configFileFlag())
		}
		for _, sub := range c.Subcommands {
			walk(sub)
		}
	}
	for _, c := range cmds {
		if !slices.Contains(clientNouns, c.Name) {
			walk(c)
		}
	}
	return cmds
}

// commands lists the top-level commands, one file each.
func commands() []*cli.Command {
	return []*cli.Command{
		versionCommand(),
		pluginCommand(),
		configCommand(),
		tlsCommand(),
		htpasswdCommand(),
		dbsyncCommand(),
		upgradeCommand(),
		conductorCommand(),
		apiCommand(),
		allInOneCommand(),
		devCommand(),
		nodeCommand(),
		portCommand(),
		portgroupCommand(),
		chassisCommand(),
		driverCommand(),
		completionCommand(),
	}
}
