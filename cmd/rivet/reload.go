package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/logging"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
)

// startReloader applies SIGHUP reloads of the reloadable options to a
// running service until ctx ends: pin_release_version (an auto pin is
// resolved from the live services at once) and log_level. dbh may be nil
// before the database is open; auto then waits for the next heartbeat.
func startReloader(ctx context.Context, files []string, cfg *config.Config, pinner *release.Pinner,
	level *slog.LevelVar, dbh *db.DB, log *slog.Logger) {
	table := pinner.Table()
	r := config.NewReloader(config.Source{Files: files, Environ: os.Environ()}, cfg, log)
	r.OnChange("DEFAULT", "pin_release_version", func(nc *config.Config) {
		p, err := nc.Pin(table)
		if err != nil {
			return // Reload validated it; unreachable
		}
		pinner.Set(p, nil)
		if p.Mode == release.PinAuto && dbh != nil {
			if err := resolveAutoPin(ctx, dbh, pinner, nc.Conductor.HeartbeatTimeout); err != nil {
				log.Warn("auto pin: listing live services failed; using latest until the next heartbeat", "error", err)
			}
		}
		e := pinner.Effective()
		log.Info("pin reloaded", "pin", p.String(), "effective", e.Label(), "api_max", e.API.String(), "rpc", e.RPC.String())
	})
	r.OnChange("DEFAULT", "log_level", func(nc *config.Config) {
		if l, err := logging.ParseLevel(nc.Default.LogLevel); err == nil {
			level.Set(l)
		}
	})
	go func() { _ = r.Run(ctx) }()
}
