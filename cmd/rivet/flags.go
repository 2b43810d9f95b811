package main

import "github.com/urfave/cli/v2"

// flagConfigFile is repeatable; later files override earlier ones, as with
// oslo.config's --config-file.
const flagConfigFile = "config-file"

func globalFlags() []cli.Flag {
	// The admin client's connection flags are accepted here too, so
	// `rivet --api-version 1.26 node list` works as well as putting them
	// after the noun; the innermost explicit one wins (clientSetting).
	return append(connFlags(),
		&cli.StringSliceFlag{
			Name:    flagConfigFile,
			Usage:   "INI configuration `FILE` (repeatable; later files override earlier ones)",
			EnvVars: []string{"RIVET_CONFIG_FILE"},
		},
	)
}

// configFileFlag is --config-file as a command declares it, to be given
// after the command's name (withConfigFileFlag).
func configFileFlag() cli.Flag {
	return &cli.StringSliceFlag{
		Name:  flagConfigFile,
		Usage: "INI configuration `FILE` (repeatable; appended to the files given before the command)",
	}
}
