package conductor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rivetmetal/rivet/core/conductor/powersync"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
)

// The power-state sync scheduler (core/conductor/powersync) reaches the
// conductor through these three adapters.

// powerSource lists the nodes the ring maps to this conductor.
type powerSource struct{ s *Service }

// Nodes implements powersync.Source.
func (p powerSource) Nodes(ctx context.Context) ([]powersync.Node, error) {
	s := p.s
	hws := s.drivers.HardwareTypes()
	if len(hws) == 0 || s.draining.Load() {
		return nil, nil
	}
	rows, err := s.db.PowerSyncNodes(ctx, s.cfg.Group, hws)
	if err != nil {
		return nil, err
	}
	out := make([]powersync.Node, 0, len(rows))
	for _, n := range rows {
		host, err := s.router.HostFor(ctx, rpc.Target{UUID: n.UUID, Driver: n.Driver, Group: n.ConductorGroup})
		if err != nil || host != s.cfg.Hostname {
			continue
		}
		// A node the sync itself put in maintenance (fault "power
		// failure") is still probed, so it leaves maintenance once its
		// BMC answers again (Ironic's _power_failure_recovery).
		out = append(out, powersync.Node{UUID: n.UUID, BMC: bmcOfInfo(n.DriverInfo), PowerState: deref(n.PowerState),
			Maintenance: n.Maintenance && deref(n.Fault) != objects.FaultPowerFailure, Locked: n.Reservation != nil})
	}
	return out, nil
}

// powerProber asks the node's driver for its power state.
type powerProber struct{ s *Service }

// GetPowerState implements powersync.Prober.
func (p powerProber) GetPowerState(ctx context.Context, pn powersync.Node) (string, error) {
	n, err := p.s.store.GetNode(ctx, pn.UUID)
	if err != nil {
		return "", err
	}
	hw, err := p.s.hardware(n)
	if err != nil {
		return "", err
	}
	ps, err := hw.GetPowerState(ctx, pluginNode(n))
	if err != nil {
		return "", driverError(n.Driver, bmcOf(n), "get power state", err)
	}
	if n.Maintenance && deref(n.Fault) == objects.FaultPowerFailure {
		p.s.recoverPowerFailure(ctx, n.UUID, string(ps))
	}
	return string(ps), nil
}

// recoverPowerFailure takes a node the sync put in maintenance (fault
// "power failure") out of it once its BMC answers, recording the power
// state read, as Ironic's _power_failure_recovery.
func (s *Service) recoverPowerFailure(ctx context.Context, uuid, observed string) {
	t, err := s.tasks.TryAcquire(ctx, uuid, "power failure recovery")
	if err != nil {
		return // busy: the next sync tries again
	}
	defer t.Release(ctx)
	n := t.Node
	if !n.Maintenance || deref(n.Fault) != objects.FaultPowerFailure {
		return
	}
	n.Maintenance, n.MaintenanceReason, n.Fault, n.PowerState = false, nil, nil, ptr(observed)
	if s.save(ctx, t) {
		t.log.Info("power failure recovered: maintenance off", "power_state", observed)
	}
}

// powerRecorder writes what the sync learns, under the node's lease.
type powerRecorder struct{ s *Service }

// syncErrorPrefix marks the last_error the sync sets, so recovery clears
// only its own.
const syncErrorPrefix = "Power state sync failed: "

// PowerChanged records an out-of-band power change once it has been seen
// on more than power_state_sync_max_retries consecutive syncs.
func (r powerRecorder) PowerChanged(ctx context.Context, pn powersync.Node, observed string) error {
	s := r.s
	seen := 1
	if v, ok := s.powerSeen.Load(pn.UUID); ok {
		seen = v.(int) + 1
	}
	if seen <= s.cfg.PowerSyncMaxRetries {
		s.powerSeen.Store(pn.UUID, seen)
		return nil
	}
	s.powerSeen.Delete(pn.UUID)
	t, err := s.tasks.TryAcquire(ctx, pn.UUID, "power state sync")
	if err != nil {
		return fmt.Errorf("conductor %s: record power state of node %s: %w", s.cfg.Hostname, pn.UUID, err)
	}
	defer t.Release(ctx)
	if t.Node.TargetPowerState != nil {
		return nil // a power action is in progress; it records the outcome
	}
	prev := deref(t.Node.PowerState)
	if prev == observed {
		return nil // a power action recorded it since the sync read the node
	}
	t.Node.PowerState = ptr(observed)
	if err := t.Save(ctx); err != nil {
		return err
	}
	s.log.Warn("power state changed out of band", "node", pn.UUID, "from", prev, "to", observed)
	return nil
}

// ProbeFailed records the failure in last_error after
// power_state_sync_max_retries consecutive failures.
func (r powerRecorder) ProbeFailed(ctx context.Context, pn powersync.Node, err error, consecutive int) {
	s := r.s
	s.powerSeen.Delete(pn.UUID)
	if consecutive != max(s.cfg.PowerSyncMaxRetries, 1) {
		return
	}
	r.powerFailure(ctx, pn.UUID, syncErrorPrefix+err.Error())
}

// powerFailure records a node whose power state could not be read
// power_state_sync_max_retries times in a row: last_error, and, unless an
// operator put it in maintenance already, maintenance with that reason and
// the fault "power failure" (API 1.42), as Ironic's
// handle_sync_power_state_max_retries_exceeded.
func (r powerRecorder) powerFailure(ctx context.Context, uuid, msg string) {
	s := r.s
	t, err := s.tasks.TryAcquire(ctx, uuid, "power state sync")
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			s.log.Debug("power sync: node busy; failure not recorded", "node", uuid, "error", err)
		}
		return
	}
	defer t.Release(ctx)
	n := t.Node
	n.LastError = ptr(msg)
	if !n.Maintenance {
		n.Maintenance, n.MaintenanceReason, n.Fault = true, ptr(msg), ptr(objects.FaultPowerFailure)
	}
	s.save(ctx, t)
}

// ProbeRecovered clears the last_error ProbeFailed set.
func (r powerRecorder) ProbeRecovered(ctx context.Context, pn powersync.Node, _ int) {
	r.setLastError(ctx, pn.UUID, func(cur *string) *string {
		if cur != nil && strings.HasPrefix(*cur, syncErrorPrefix) {
			return nil
		}
		return cur
	})
}

func (r powerRecorder) setLastError(ctx context.Context, uuid string, f func(cur *string) *string) {
	s := r.s
	t, err := s.tasks.TryAcquire(ctx, uuid, "power state sync")
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			s.log.Debug("power sync: node busy; last_error not updated", "node", uuid, "error", err)
		}
		return
	}
	defer t.Release(ctx)
	t.Node.LastError = f(t.Node.LastError)
	s.save(ctx, t)
}

// CycleDone logs the cycle's figures.
func (r powerRecorder) CycleDone(_ context.Context, st powersync.Stats) {
	r.s.log.Debug("power-state sync cycle", "stats", st)
}
