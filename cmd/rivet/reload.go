package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/htpasswd"
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

// loadHtpasswd loads the htpasswd file at path (the value of option, e.g.
// "[DEFAULT] http_basic_auth_user_file") and re-reads it on every SIGHUP
// until ctx ends, so that users are added, removed or given new passwords
// without a restart. A file that no longer loads is logged naming option,
// and the users loaded before stay in force. The path itself is not
// reloadable: a new path needs a restart, as the config reloader says.
func loadHtpasswd(ctx context.Context, option, path string, log *slog.Logger) (*htpasswd.File, error) {
	f, err := htpasswd.Load(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", option, err)
	}
	// Registered before returning: a SIGHUP sent once the service is up
	// is never missed (nor, with the config reloader listening too, fatal).
	onSIGHUP(ctx, func() {
		if err := f.Reload(); err != nil {
			log.Error("htpasswd reload failed; keeping the users loaded before", "option", option, "error", err)
			return
		}
		log.Info("htpasswd reloaded", "option", option, "path", path, "users", f.Len())
	})
	return f, nil
}

// loadProjects loads the projects file at path (option names it) and
// re-reads it on every SIGHUP until ctx ends, as loadHtpasswd does.
func loadProjects(ctx context.Context, option, path string, log *slog.Logger) (*htpasswd.Projects, error) {
	p, err := htpasswd.LoadProjects(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", option, err)
	}
	onSIGHUP(ctx, func() {
		if err := p.Reload(); err != nil {
			log.Error("projects file reload failed; keeping the scopes loaded before", "option", option, "error", err)
			return
		}
		log.Info("projects file reloaded", "option", option, "path", path, "users", p.Len())
	})
	return p, nil
}

// onSIGHUP runs f on every SIGHUP until ctx ends; the signal is
// registered before it returns, so none sent once the service is up is
// missed.
func onSIGHUP(ctx context.Context, f func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-ctx.Done():
				return
			case <-ch:
			}
			f()
		}
	}()
}
