package conductor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
)

// register writes the conductors row (online, fresh heartbeat, drivers =
// the hardware types whose plugins negotiated), its hardware interface rows
// (its catalog: what GET /v1/drivers shows at 1.30), its plugin rows, and
// the services row.
func (s *Service) register(ctx context.Context) error {
	hwTypes := s.drivers.HardwareTypes()
	ifaces := catalog.Rows(s.catalog())
	target, err := s.store.Registry().Target("Conductor", s.pinner.Effective())
	if err != nil {
		return fmt.Errorf("conductor %s: %w", s.cfg.Hostname, err)
	}
	if live, err := s.db.LiveConductors(ctx, s.cfg.HeartbeatTimeout); err == nil {
		for _, c := range live {
			if c.Hostname == s.cfg.Hostname {
				s.log.Warn("a live conductor is already registered under this name; taking the registration over " +
					"(if it is another process, give each conductor a unique [DEFAULT] host)")
			}
		}
	}
	plugs := s.drivers.Plugins()
	c, err := s.db.RegisterConductor(ctx, db.ConductorRegistration{Hostname: s.cfg.Hostname, Group: s.cfg.Group,
		Drivers: hwTypes, Version: target.String(), Interfaces: ifaces, Plugins: plugs})
	if err != nil {
		return err
	}
	s.conductorID.Store(c.ID)
	for _, p := range plugs {
		if p.Status != nil && *p.Status == "ok" && p.Driver != nil {
			s.metrics.pluginSeen(*p.Driver)
		}
		if p.Status != nil && *p.Status == "refused" {
			s.log.Warn("driver plugin refused; recorded in conductor_plugins", "driver", deref(p.Driver), "reason", deref(p.Error))
		}
	}
	if len(hwTypes) == 0 {
		s.log.Warn("no hardware type is served: no plugin negotiated for [conductor] enabled_hardware_types")
	}
	return s.registerService(ctx)
}

func (s *Service) registerService(ctx context.Context) error {
	pin := s.pinner.Pin().String()
	_, err := s.db.RegisterService(ctx, db.ServiceRegistration{Hostname: s.cfg.Hostname, Binary: db.BinaryConductor,
		Release: release.Current, ServiceVersion: s.pinner.Table().Head().ServiceVersion, Pin: pin})
	if err == nil {
		s.servicePin.Store(&pin)
	}
	return err
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// heartbeatLoop touches the conductors and services rows every
// heartbeat_interval: online until shutdown starts, offline while the
// conductor drains (so the ring has moved but its leases stay its own).
func (s *Service) heartbeatLoop() {
	tick := time.NewTicker(s.cfg.HeartbeatInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.stopBeat:
			return
		case <-tick.C:
		}
		// A heartbeat may outlast its interval on a loaded database; it
		// is still useful until the row would look dead.
		ctx, cancel := context.WithTimeout(context.Background(),
			max(s.cfg.HeartbeatInterval, (s.cfg.HeartbeatTimeout-s.cfg.HeartbeatInterval)/2))
		s.heartbeat(ctx)
		cancel()
	}
}

func (s *Service) heartbeat(ctx context.Context) {
	s.beatMu.Lock()
	defer s.beatMu.Unlock()
	online := !s.draining.Load()
	err := s.db.TouchConductor(ctx, s.cfg.Hostname, online)
	if errors.Is(err, db.ErrNotFound) && online {
		s.log.Warn("conductor row vanished; registering again")
		err = s.register(ctx)
	}
	if err != nil {
		s.log.Error("conductor heartbeat failed", "error", err)
		return
	}
	if !online {
		return // the services row was marked offline at Stop
	}
	if err := s.finalize.CheckRunning(ctx); err != nil {
		var tooOld *release.ServiceTooOldError
		if errors.As(err, &tooOld) {
			s.log.Error("stopping: a newer release was finalized while this conductor ran", "error", err)
			s.tooOld(err)
			return
		}
		s.log.Warn("reading the finalized release failed", "error", err)
	}
	s.followAutoPin(ctx)
	if registered := s.servicePin.Load(); registered == nil || *registered != s.pinner.Pin().String() {
		if err := s.registerService(ctx); err != nil {
			s.log.Error("recording the reloaded pin failed", "error", err)
		}
	}
	err = s.db.HeartbeatService(ctx, s.cfg.Hostname, db.BinaryConductor)
	if errors.Is(err, db.ErrNotFound) {
		err = s.registerService(ctx)
	}
	if err != nil {
		s.log.Error("service heartbeat failed", "error", err)
	}
}

// followAutoPin recomputes an "auto" pin from the service versions of the
// services that count (this conductor's included; quiet ones too, until
// forgotten), so the effective release follows the oldest of them as the
// fleet is upgraded; the guard advances the
// finalized release before a newer one is used.
func (s *Service) followAutoPin(ctx context.Context) {
	before := s.pinner.Effective().Label()
	e, err := s.finalize.Follow(ctx, s.pinner)
	if err != nil {
		s.log.Warn("auto pin: recomputing failed; keeping the current pin", "error", err)
		return
	}
	if after := e.Label(); after != before {
		s.log.Info("auto pin moved", "from", before, "to", after)
	}
}
