package main

import "github.com/urfave/cli/v2"

// flagConfigFile is repeatable; later files override earlier ones, as with
// oslo.config's --config-file.
const flagConfigFile = "config-file"

func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{
			Name:    flagConfigFile,
			Usage:   "INI configuration `FILE` (repeatable; later files override earlier ones)",
			EnvVars: []string{"RIVET_CONFIG_FILE"},
		},
	}
}
