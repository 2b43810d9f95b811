package main

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/drivers/ipmi"
	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/plugins"
)

// builtinDriver is a driver the rivet binary serves in plugin mode: the
// configuration section it reads and how to build it from that section.
type builtinDriver struct {
	section string // "" for none
	build   func(*slog.Logger, *config.Config) plugins.Driver
}

// builtinDrivers are the drivers the rivet binary serves in plugin mode, so
// a conductor needs no other binary (`go run ./cmd/rivet dev`). A
// rivet-driver-<name> in the plugin directory takes precedence. Their
// section reaches them from the conductor as RIVET_<SECTION>_* variables
// (builtinPluginEnv), as a plugin process reads no configuration file.
var builtinDrivers = map[string]builtinDriver{
	"fake": {build: func(log *slog.Logger, _ *config.Config) plugins.Driver { return fake.New(log) }},
	"ipmi": {section: "ipmi", build: func(log *slog.Logger, c *config.Config) plugins.Driver {
		o := ipmi.DefaultOptions()
		o.CipherSuite, o.CommandTimeout, o.Retries = c.IPMI.CipherSuite, c.IPMI.CommandTimeout, c.IPMI.Retries
		o.MinCommandInterval, o.PowerStateChangeTimeout = c.IPMI.MinCommandInterval, c.IPMI.PowerStateChangeTimeout
		return ipmi.New(log, o)
	}},
	"redfish": {section: "redfish", build: func(log *slog.Logger, c *config.Config) plugins.Driver {
		o := redfish.DefaultOptions()
		o.ConnectionTimeout, o.SessionBudgetPerBMC = c.Redfish.ConnectionTimeout, c.Redfish.SessionBudgetPerBMC
		o.VerifyCADefault, o.UseSessions = c.Redfish.VerifyCADefault, c.Redfish.UseSessions
		o.PowerStateChangeTimeout = c.Redfish.PowerStateChangeTimeout
		return redfish.New(log, o)
	}},
}

// builtinPluginEnv is the environment a built-in driver's plugin process
// gets: its configuration section as the conductor loaded it.
func builtinPluginEnv(cfg *config.Config, driver string) []string {
	if s := builtinDrivers[driver].section; s != "" {
		return config.SectionEnv(cfg, s)
	}
	return nil
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
				d, ok := builtinDrivers[name]
				if !ok || c.NArg() != 1 {
					names := make([]string, 0, len(builtinDrivers))
					for n := range builtinDrivers {
						names = append(names, n)
					}
					slices.Sort(names)
					return cli.Exit(fmt.Sprintf("plugin serve: unknown driver %q (built-in: %s)", name, strings.Join(names, ", ")), 127)
				}
				cfg := config.Default()
				if d.section != "" {
					var err error
					if cfg, err = config.LoadSection(d.section, os.Environ()); err != nil {
						return cli.Exit("plugin serve "+name+": invalid configuration: "+strings.Join(problemLines(err), "; "), 2)
					}
				}
				// The logger must exist before Serve swaps os.Stderr.
				log := plugins.NewLogger(slog.LevelInfo)
				plugins.Serve(plugins.ServeConfig{Driver: d.build(log, cfg), Logger: log})
				return nil
			},
		}},
	}
}
