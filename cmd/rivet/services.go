package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/upgrade"
)

// releaseTable is the release table the services run against; tests swap
// in a synthetic one to exercise an upgrade.
var releaseTable = release.Default

// newGuard returns the finalized-release guard (ARCHITECTURE §4) of a
// process named name whose services rows are binaries on [DEFAULT] host.
func newGuard(dbh *db.DB, cfg *config.Config, name string, log *slog.Logger, binaries ...string) *upgrade.Guard {
	return upgrade.NewGuard(dbh, releaseTable(), upgrade.GuardOptions{Name: name, Hostname: cfg.Default.Host,
		Binaries: binaries, Timeout: cfg.Conductor.HeartbeatTimeout, ForgetTimeout: cfg.Default.ServiceForgetTimeout, Logger: log})
}

// isTooOld reports whether err says a newer release was finalized than
// this binary can run.
func isTooOld(err error) bool {
	var tooOld *release.ServiceTooOldError
	return errors.As(err, &tooOld)
}

// registerAPI records this rivet api in the services table (ARCHITECTURE
// §4), then refuses to go on (marking it offline again) when guard's start
// checks fail, and heartbeats it every service_heartbeat_interval: an
// "auto" pin follows the oldest service that counts (live, unknown or
// stopped; db.Service.Counts), and when the finalized
// release passes this binary (a race with another service's start) it logs
// an error and calls tooOld; a pin reloaded by SIGHUP is recorded at the
// next heartbeat. The returned stop marks it offline.
func registerAPI(ctx context.Context, guard *upgrade.Guard, cfg *config.Config, pinner *release.Pinner, log *slog.Logger,
	tooOld func(error)) (stop func(), err error) {
	dbh, host := guard.DB(), cfg.Default.Host
	// registered is the pin the services row shows: a SIGHUP reload
	// changes the pinner, and the next heartbeat records it, as a
	// conductor's does (rivet upgrade status and check read it there).
	registered := ""
	register := func(ctx context.Context) error {
		pin := pinner.Pin().String()
		_, err := dbh.RegisterService(ctx, db.ServiceRegistration{Hostname: host, Binary: db.BinaryAPI,
			Release: release.Current, ServiceVersion: pinner.Table().Head().ServiceVersion, Pin: pin})
		if err == nil {
			registered = pin
		}
		return err
	}
	offline := func() {
		octx, ocancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ocancel()
		if err := dbh.MarkServiceOffline(octx, host, db.BinaryAPI); err != nil {
			log.Warn("marking the service offline failed", "error", err)
		}
	}
	if err := register(ctx); err != nil {
		return nil, err
	}
	if err := guard.Start(ctx, pinner); err != nil {
		offline()
		return nil, err
	}
	bctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(cfg.Default.ServiceHeartbeatInterval)
		defer tick.Stop()
		for {
			select {
			case <-bctx.Done():
				return
			case <-tick.C:
			}
			var err error
			if pinner.Pin().String() != registered {
				err = register(bctx)
			} else if err = dbh.HeartbeatService(bctx, host, db.BinaryAPI); errors.Is(err, db.ErrNotFound) {
				err = register(bctx)
			}
			if err != nil && bctx.Err() == nil {
				log.Error("service heartbeat failed", "error", err)
			}
			if err := guard.CheckRunning(bctx); isTooOld(err) {
				log.Error("stopping: a newer release was finalized while this service ran", "error", err)
				tooOld(err)
				return
			} else if err != nil && bctx.Err() == nil {
				log.Warn("reading the finalized release failed", "error", err)
			}
			if _, err := guard.Follow(bctx, pinner); err != nil && bctx.Err() == nil {
				log.Warn("auto pin: recomputing failed; keeping the current pin", "error", err)
			}
		}
	}()
	return func() {
		cancel()
		<-done
		offline()
	}, nil
}
