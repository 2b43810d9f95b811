package main

import (
	"fmt"
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
					"environment; print \"configuration OK\" or every problem and exit 1",
				Flags: []cli.Flag{&cli.StringSliceFlag{
					Name:  flagConfigFile,
					Usage: "INI configuration `FILE` (repeatable; appended to the global --config-file files)",
				}},
				Action: func(c *cli.Context) error {
					if _, err := config.Load(configFiles(c), os.Environ()); err != nil {
						lines := problemLines(err)
						if len(lines) == 1 {
							return cli.Exit(lines[0], 1)
						}
						return cli.Exit(fmt.Sprintf("%d configuration problems:\n  %s", len(lines), strings.Join(lines, "\n  ")), 1)
					}
					_, err := fmt.Fprintln(c.App.Writer, "configuration OK")
					return err
				},
			},
		},
	}
}
