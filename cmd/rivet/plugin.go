package main

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/drivers/ipmi"
	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/plugins"
)

// builtinDrivers are the drivers the rivet binary serves in plugin mode, so
// a conductor needs no other binary (`go run ./cmd/rivet dev`). A
// rivet-driver-<name> in the plugin directory takes precedence.
var builtinDrivers = map[string]func(*slog.Logger) plugins.Driver{
	"fake":    func(log *slog.Logger) plugins.Driver { return fake.New(log) },
	"ipmi":    func(log *slog.Logger) plugins.Driver { return ipmi.New(log, ipmi.DefaultOptions()) },
	"redfish": func(log *slog.Logger) plugins.Driver { return redfish.New(log, redfish.DefaultOptions()) },
}

// pluginCommand is the hidden `rivet plugin serve <driver>` mode the
// conductor re-executes the rivet binary in. It never returns when serving.
func pluginCommand() *cli.Command {
	return &cli.Command{
		Name:   "plugin",
		Usage:  "serve a built-in driver as a plugin (started by the conductor)",
		Hidden: true,
		Subcommands: []*cli.Command{{
			Name:      "serve",
			Usage:     "serve one built-in driver over go-plugin",
			ArgsUsage: "DRIVER",
			Action: func(c *cli.Context) error {
				name := c.Args().First()
				newDriver, ok := builtinDrivers[name]
				if !ok || c.NArg() != 1 {
					names := make([]string, 0, len(builtinDrivers))
					for n := range builtinDrivers {
						names = append(names, n)
					}
					slices.Sort(names)
					return cli.Exit(fmt.Sprintf("plugin serve: unknown driver %q (built-in: %s)", name, strings.Join(names, ", ")), 127)
				}
				// The logger must exist before Serve swaps os.Stderr.
				log := plugins.NewLogger(slog.LevelInfo)
				plugins.Serve(plugins.ServeConfig{Driver: newDriver(log), Logger: log})
				return nil
			},
		}},
	}
}
