package conductor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/rivetmetal/rivet/core/conductor/powersync"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/db"
)

// The power-state sync scheduler (core/conductor/powersync) reaches the
// conductor through these three adapters.

// powerSource lists the nodes the ring maps to this conductor.
type powerSource struct{ s *Service }

// Nodes implements powersync.Source: the scheduler copies each node
// into its compact listing as it is read.
func (p powerSource) Nodes(ctx context.Context, add func(powersync.Node)) error {
	return p.s.ownedNodes(ctx, func(n *db.PowerSyncNode) {
		// A node the sync itself put in maintenance (fault "power
		// failure") is still probed, so it leaves maintenance once its
		// BMC answers again (Ironic's _power_failure_recovery).
		add(powersync.Node{UUID: n.UUID, Name: deref(n.Name), BMC: bmcOfInfo(n.DriverInfo),
			PowerState: deref(n.PowerState), Maintenance: n.Maintenance && deref(n.Fault) != objects.FaultPowerFailure,
			Locked: n.Reservation != nil})
	})
}

// ownedNodes calls fn with each node of this conductor's group and
// hardware types that the ring maps to this conductor (none while it
// stops), with the columns power sync and the node metrics read. The
// nodes are read a page at a time, so however many the conductor holds,
// it never has more than a page of rows decoded; fn must not keep n.
func (s *Service) ownedNodes(ctx context.Context, fn func(n *db.PowerSyncNode)) error {
	hws := s.drivers.HardwareTypes()
	if len(hws) == 0 || s.draining.Load() {
		return nil
	}
	return s.db.PowerSyncNodes(ctx, s.cfg.Group, hws, func(rows []db.PowerSyncNode) error {
		for i := range rows {
			n := &rows[i]
			host, err := s.router.HostFor(ctx, rpc.Target{UUID: n.UUID, Driver: n.Driver, Group: n.ConductorGroup})
			if err != nil || host != s.cfg.Hostname {
				continue
			}
			fn(n)
		}
		return nil
	})
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
		// A copy of the UUID: pn's strings share a chunk of the
		// scheduler's listing, which the entry would keep alive.
		s.powerSeen.Store(strings.Clone(pn.UUID), seen)
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
	s.syncLog.failed(pn, err, consecutive)
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
func (r powerRecorder) ProbeRecovered(ctx context.Context, pn powersync.Node, failures int) {
	r.s.syncLog.recovered(pn, failures)
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

// CycleDone logs the cycle's figures and observes them.
func (r powerRecorder) CycleDone(_ context.Context, st powersync.Stats) {
	r.s.log.Debug("power-state sync cycle", "stats", st)
	m := r.s.metrics
	m.powerSyncCycle.Observe(st.Duration.Seconds())
	m.powerSyncFailures.Add(float64(st.Failed))
	m.powerSyncChanges.Add(float64(st.Changed))
}

// failureLogEvery is how often power sync repeats its line about a node
// whose power state keeps failing to be read.
const failureLogEvery = 10 * time.Minute

// failureLog logs power sync's failures per node: the first failure, then
// at most one reminder per every, and the recovery; a dead BMC among
// thousands of nodes must not flood the log at every cycle.
type failureLog struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time
	mu    sync.Mutex
	last  map[string]time.Time // node UUID → when its failure was last logged
}

func newFailureLog(log *slog.Logger) *failureLog {
	return &failureLog{log: log, every: failureLogEvery, now: time.Now, last: map[string]time.Time{}}
}

// failed logs the consecutive-th failure to read pn's power state, unless
// one was logged less than every ago.
func (f *failureLog) failed(pn powersync.Node, err error, consecutive int) {
	now := f.now()
	f.mu.Lock()
	last, seen := f.last[pn.UUID]
	if seen && now.Sub(last) < f.every {
		f.mu.Unlock()
		return
	}
	f.last[strings.Clone(pn.UUID)] = now // a copy: see PowerChanged
	f.mu.Unlock()
	msg := "power sync: reading the power state failed"
	if seen {
		msg = "power sync: reading the power state still fails"
	}
	f.log.Warn(msg, "node", pn.UUID, "node_name", pn.Name, "bmc", pn.BMC, "consecutive_failures", consecutive,
		"next_reminder_in", f.every, "error", err)
}

// recovered logs that pn's power state was read again after failures, if
// its failure was logged.
func (f *failureLog) recovered(pn powersync.Node, failures int) {
	f.mu.Lock()
	_, seen := f.last[pn.UUID]
	delete(f.last, pn.UUID)
	f.mu.Unlock()
	if seen {
		f.log.Info("power sync: power state readable again", "node", pn.UUID, "node_name", pn.Name, "bmc", pn.BMC,
			"failed_reads", failures)
	}
}
