package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/logging"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db/upgrade"
)

// startReloader applies SIGHUP reloads of the reloadable options to a
// running service until ctx ends: pin_release_version through guard (an
// auto pin is resolved from the live services at once; a pin an older live
// service cannot read is refused and the running pin kept; the finalized
// release advances before a newer effective release is used) and
// log_level.
func startReloader(ctx context.Context, files []string, cfg *config.Config, pinner *release.Pinner,
	level *slog.LevelVar, guard *upgrade.Guard, log *slog.Logger) {
	table := pinner.Table()
	r := config.NewReloader(config.Source{Files: files, Environ: os.Environ()}, cfg, log)
	r.OnChangeOrKeep("DEFAULT", "pin_release_version", func(nc *config.Config) error {
		p, err := nc.Pin(table)
		if err != nil {
			return err // Reload validated it; unreachable
		}
		e, err := guard.Apply(ctx, pinner, p)
		if err != nil {
			return err // logged by the reloader, naming the option
		}
		log.Info("pin reloaded", "pin", p.String(), "effective", e.Label(), "api_max", e.API.String(), "rpc", e.RPC.String())
		return nil
	})
	r.OnChange("DEFAULT", "log_level", func(nc *config.Config) {
		if l, err := logging.ParseLevel(nc.Default.LogLevel); err == nil {
			level.Set(l)
		}
	})
	go func() { _ = r.Run(ctx) }()
}
