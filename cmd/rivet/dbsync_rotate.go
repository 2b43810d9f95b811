package main

import (
	"context"
	"log/slog"

	"github.com/rivetmetal/rivet/db/dbsync"
	"github.com/urfave/cli/v2"
)

func rotateKeyCommand() *cli.Command {
	return &cli.Command{
		Name:    "rotate-key",
		Aliases: []string{"rotate_key"},
		Usage: "re-encrypt every BMC credential with the first key of [DEFAULT] credential_key_file " +
			"while services keep running; then the old keys can leave the file",
		Flags: []cli.Flag{&cli.IntFlag{
			Name:  "batch-size",
			Usage: "re-encrypt `N` nodes per transaction",
			Value: 100,
		}},
		Action: func(c *cli.Context) error {
			cfg, err := loadConfig(c)
			if err != nil {
				return err
			}
			if c.Int("batch-size") <= 0 {
				return cli.Exit("dbsync rotate-key: --batch-size must be positive", dbsync.ExitBadArguments)
			}
			keys, err := credentialKeys(cfg, slog.New(slog.DiscardHandler))
			if err != nil {
				return cli.Exit("dbsync rotate-key: "+err.Error(), dbsync.ExitRefused)
			}
			return runDBSync(c, func(s *dbsync.Syncer, ctx context.Context) error {
				return s.RotateKey(ctx, keys, c.Int("batch-size"))
			})
		},
	}
}
