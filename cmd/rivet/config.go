package main

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/config"
	"github.com/urfave/cli/v2"
)

// loadConfig loads the --config-file files, in the order given, and the
// RIVET_<SECTION>_<OPTION> environment. A problem becomes one line naming
// the file and option, and exit code 2, so a service stops at start.
func loadConfig(c *cli.Context) (*config.Config, error) {
	cfg, err := config.Load(configFiles(c), os.Environ())
	if err != nil {
		return nil, cli.Exit("invalid configuration: "+strings.Join(problemLines(err), "; "), 2)
	}
	return cfg, nil
}

// loadServiceConfig is loadConfig plus what service s would expose
// (config.ValidateService): an unauthenticated listener off loopback stops
// the service at start, exit code 2, naming the options to set.
func loadServiceConfig(c *cli.Context, s config.Service) (*config.Config, error) {
	cfg, err := loadConfig(c)
	if err != nil {
		return nil, err
	}
	if err := cfg.ValidateService(s); err != nil {
		return nil, cli.Exit(fmt.Sprintf("%s: invalid configuration: %s", s, strings.Join(problemLines(err), "; ")), 2)
	}
	return cfg, nil
}

// logNotices logs what service s exposes with cfg (config.ServiceNotices).
func logNotices(log *slog.Logger, cfg *config.Config, s config.Service) {
	for _, n := range cfg.ServiceNotices(s) {
		if n.Warn {
			log.Warn(n.Message)
		} else {
			log.Info(n.Message)
		}
	}
}

// configFiles collects --config-file from the global flag and from any
// command that redeclares it (rivet config check --config-file …),
// outermost first, so later files still override earlier ones.
func configFiles(c *cli.Context) []string {
	var files []string
	lineage := c.Lineage()
	for i := len(lineage) - 1; i >= 0; i-- {
		if ctx := lineage[i]; slices.Contains(ctx.LocalFlagNames(), flagConfigFile) {
			files = append(files, ctx.StringSlice(flagConfigFile)...)
		}
	}
	return files
}

// problemLines renders each configuration problem on one line.
func problemLines(err error) []string {
	var lines []string
	for _, p := range config.Problems(err) {
		lines = append(lines, strings.Join(strings.Fields(p.Error()), " "))
	}
	return lines
}

func configCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "print the configuration sample or reference, or check configuration files",
		Subcommands: []*cli.Command{
			{
				Name:  "sample",
				Usage: "print every option with its help and default (configs/rivet.conf.sample)",
				Flags: []cli.Flag{&cli.StringFlag{
					Name:  "format",
					Value: "ini",
					Usage: "ini (the sample file) or markdown (docs/admin/configuration.md)",
				}},
				Action: func(c *cli.Context) error {
					switch f := c.String("format"); f {
					case "ini":
						return config.Sample(c.App.Writer)
					case "markdown":
						return config.Reference(c.App.Writer)
					default:
						return cli.Exit(fmt.Sprintf("config sample: unknown --format %q: valid values are ini, markdown", f), 2)
					}
				},
			},
			{
				Name: "check",
				Usage: "load and validate the --config-file files and the RIVET_<SECTION>_<OPTION> " +
					"environment for the --service servers; print \"configuration OK\" or every problem and exit 1",
				Flags: []cli.Flag{configFileFlag(), &cli.StringSliceFlag{
					Name: "service",
					Usage: "check what `SERVICE` would expose with this configuration: api, conductor or all-in-one " +
						"(repeatable; default api and conductor, as on a host running both)",
				}},
				Action: checkConfig,
			},
		},
	}
}

// checkConfig is `rivet config check`: Load's problems, then those of each
// --service (an unauthenticated listener off loopback).
func checkConfig(c *cli.Context) error {
	services := []config.Service{config.ServiceAPI, config.ServiceConductor}
	if names := c.StringSlice("service"); len(names) > 0 {
		services = nil
		for _, name := range names {
			s := config.Service(name)
			if !slices.Contains(config.Services, s) {
				return cli.Exit(fmt.Sprintf("config check: unknown --service %q: valid values are api, conductor, all-in-one", name), 2)
			}
			services = append(services, s)
		}
	}
	cfg, err := config.Load(configFiles(c), os.Environ())
	var lines []string
	if err != nil {
		lines = problemLines(err)
	} else {
		for _, s := range services {
			for _, l := range problemLines(cfg.ValidateService(s)) {
				if !slices.Contains(lines, l) {
					lines = append(lines, l)
				}
			}
		}
	}
	switch len(lines) {
	case 0:
		_, err := fmt.Fprintln(c.App.Writer, "configuration OK")
		return err
	case 1:
		return cli.Exit(lines[0], 1)
	}
	return cli.Exit(fmt.Sprintf("%d configuration problems:\n  %s", len(lines), strings.Join(lines, "\n  ")), 1)
}
