package conductor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/db"
)

// orphanLoop runs checkOrphans every check_provision_state_interval.
func (s *Service) orphanLoop() {
	tick := time.NewTicker(s.cfg.CheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-s.stopBg:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), max(s.cfg.CheckInterval, 30*time.Second))
		s.checkOrphans(ctx)
		s.checkOrphanAllocations(ctx)
		s.syncConsoles(ctx)
		cancel()
	}
}

// checkOrphans finds the nodes the ring over live conductors maps here that
// need a conductor and recovers each under its lease:
//   - a lease held by a conductor whose heartbeat is older than
//     heartbeat_timeout, or an expired lease, is taken over (this
//     conductor's own only when expired and no task of its holds the
//     node: a release that failed while the database was down);
//   - a node left in a transient state (deploying, cleaning, …) goes to
//     its failure state with last_error; a left target_power_state is
//     cleared;
//   - a node waiting for its agent longer than deploy_callback_timeout
//     fails;
//   - an active node deployed by another conductor is re-adopted
//     (conductor_affinity = this conductor).
//
// It returns how many nodes it recovered.
func (s *Service) checkOrphans(ctx context.Context) int {
	if s.draining.Load() {
		return 0
	}
	if err := s.router.Refresh(ctx); err != nil {
		s.log.Error("takeover check: hash ring refresh failed", "error", err)
		return 0
	}
	live, err := s.db.LiveConductors(ctx, s.cfg.HeartbeatTimeout)
	if err != nil {
		s.log.Error("takeover check: listing live conductors failed", "error", err)
		return 0
	}
	q := db.OrphanQuery{Self: s.cfg.Hostname, SelfID: s.conductorID.Load(), Group: strings.ToLower(s.cfg.Group),
		Drivers: s.drivers.HardwareTypes(), Unleased: stuckStates(), Active: string(states.Active)}
	for _, c := range live {
		q.Live = append(q.Live, c.Hostname)
	}
	nodes, err := s.db.OrphanCandidates(ctx, q)
	if err != nil {
		s.log.Error("takeover check failed", "error", err)
		return 0
	}
	waiting, err := s.callbackTimedOut(ctx, q)
	if err != nil {
		s.log.Error("callback timeout check failed", "error", err)
	}
	nodes = append(nodes, waiting...)
	recovered := 0
	for _, row := range nodes {
		if ctx.Err() != nil || s.draining.Load() {
			break
		}
		host, err := s.router.HostFor(ctx, rpc.Target{UUID: row.UUID, Driver: row.Driver, Group: row.ConductorGroup})
		if err != nil || host != s.cfg.Hostname || s.tasks.Holds(row.UUID) {
			continue
		}
		if s.recover(ctx, row) {
			recovered++
		}
	}
	return recovered
}

func stuckStates() []string {
	out := make([]string, len(states.StuckStates))
	for i, st := range states.StuckStates {
		out[i] = string(st)
	}
	return out
}

// callbackTimedOut lists nodes waiting in "wait call-back" or, for their
// cleaning agent, in "clean wait" longer than deploy_callback_timeout, and
// in "inspect wait" whose inspection started longer than
// inspect_wait_timeout ago.
func (s *Service) callbackTimedOut(ctx context.Context, q db.OrphanQuery) ([]db.Node, error) {
	if s.cfg.DeployCallbackTimeout <= 0 && s.cfg.InspectWaitTimeout <= 0 {
		return nil, nil
	}
	now, err := s.db.Now(ctx)
	if err != nil {
		return nil, err
	}
	var out []db.Node
	if d := s.cfg.DeployCallbackTimeout; d > 0 {
		for _, st := range []string{string(states.DeployWait), string(states.CleanWait)} {
			waiting, err := s.db.WaitingSince(ctx, q.Group, q.Drivers, st, now.Add(-d))
			if err != nil {
				return nil, err
			}
			out = append(out, waiting...)
		}
	}
	if d := s.cfg.InspectWaitTimeout; d > 0 {
		inspecting, err := s.db.InspectingSince(ctx, q.Group, q.Drivers, string(states.InspectWait), now.Add(-d))
		if err != nil {
			return nil, err
		}
		out = append(out, inspecting...)
	}
	return out, nil
}

// recover takes the node's lease (over from a dead holder when needed) and
// puts the node in a defined state.
func (s *Service) recover(ctx context.Context, row db.Node) bool {
	log := s.log.With("node", row.UUID, "periodic", "takeover")
	var t *Task
	var err error
	from := ""
	switch {
	case row.Reservation != nil && *row.Reservation == s.cfg.Hostname:
		// Its own lease, expired: a task of this conductor ended without
		// releasing it (the database was unreachable then), and no task
		// holds the node now (checkOrphans skips those). An expired lease
		// is free to take.
		from = *row.Reservation
		t, err = s.tasks.TryAcquire(ctx, row.UUID, "takeover")
	case row.Reservation != nil:
		from = *row.Reservation
		t, err = s.tasks.TakeOver(ctx, row.UUID, from, "takeover", s.cfg.HeartbeatTimeout)
	default:
		t, err = s.tasks.TryAcquire(ctx, row.UUID, "takeover")
	}
	var locked *db.NodeLockedError
	if errors.As(err, &locked) || errors.Is(err, db.ErrNotFound) {
		return false // someone else acts on it now, or it is gone
	}
	if err != nil {
		log.Error("takeover: taking the lease failed", "error", err)
		return false
	}
	defer t.Release(ctx)
	n := t.Node
	t.errorType = eventTakeover
	if from != "" && from != s.cfg.Hostname {
		s.metrics.takeovers.Inc()
		s.tasks.history.record(ctx, n, severityInfo, eventTakeover,
			fmt.Sprintf("Conductor %s took over node %s from conductor %s, which is no longer alive", s.cfg.Hostname, n.UUID, from), "", "")
	}
	st := states.State(n.ProvisionState)
	changed := false
	switch {
	case isStuck(st):
		why := fmt.Sprintf("Conductor %s took over node %s while it was %q", s.cfg.Hostname, n.UUID, st)
		switch from {
		case "":
			why += " with no conductor working on it"
		case s.cfg.Hostname:
			why += " under an expired lease of its own that it could not release"
		default:
			why += fmt.Sprintf(" under a lease of conductor %s, which is no longer alive", from)
		}
		if err := fire(n, states.Fail, ""); err != nil {
			log.Error("takeover: no failure transition", "provision_state", st, "error", err)
			return false
		}
		n.LastError = ptr(why + "; the operation did not complete.")
		changed = true
	case st == states.DeployWait && s.callbackOverdue(ctx, n.ProvisionUpdatedAt):
		_ = fire(n, states.Fail, "")
		n.LastError = ptr(fmt.Sprintf("Timeout reached while waiting for callback for node %s", n.UUID))
		changed = true
	case st == states.InspectWait && !n.Maintenance && s.waitOverdue(ctx, n.InspectionStartedAt, s.cfg.InspectWaitTimeout):
		// Ironic's _check_inspect_wait_timeouts (maintenance: False): fail,
		// power off.
		if err := s.abortWait(ctx, t); err != nil {
			log.Warn("inspect wait timeout: powering the node off failed", "error", err)
		}
		_ = fire(n, states.Fail, "")
		n.LastError = ptr("timeout reached while inspecting the node")
		changed = true
	case st == states.CleanWait && s.callbackOverdue(ctx, n.ProvisionUpdatedAt):
		_ = fire(n, states.Fail, "")
		n.LastError = ptr(fmt.Sprintf("Timeout reached while cleaning the node %s. Please check if the ramdisk responsible for the cleaning is running on the node.", n.UUID))
		changed = true
	case st == states.Active && (n.ConductorAffinity == nil || *n.ConductorAffinity != s.conductorID.Load()):
		n.ConductorAffinity = ptr(s.conductorID.Load())
		changed = true
	}
	if n.TargetPowerState != nil {
		// A power action its conductor did not finish: its outcome is
		// unknown, so say so where the admin looks, instead of clearing
		// the target without a trace.
		why := fmt.Sprintf("Power action %q on node %s was interrupted", *n.TargetPowerState, n.UUID)
		switch from {
		case "", s.cfg.Hostname:
			why += " (its lease expired before it completed)"
		default:
			why += fmt.Sprintf(" when conductor %s stopped; conductor %s took the node over", from, s.cfg.Hostname)
		}
		why += "; the power state is as last recorded until the next power sync. Check the node's power " +
			"state (GET /v1/nodes/{node}/states) and request the power action again if it is still needed."
		if n.LastError != nil && changed {
			why = *n.LastError + " " + why
		}
		n.LastError = ptr(why)
		n.TargetPowerState = nil
		changed = true
	}
	if !changed {
		if from != "" {
			log.Info("took over an expired or dead conductor's lease; node needed no recovery", "from", from)
		}
		return from != ""
	}
	if !s.save(ctx, t) {
		return false
	}
	log.Warn("node recovered", "from", from, "provision_state", n.ProvisionState, "last_error", deref(n.LastError))
	return true
}

// callbackOverdue reports whether a node that entered wait call-back at
// since has waited past deploy_callback_timeout, by the database's clock
// as callbackTimedOut chose it: this host's clock may be off.
func (s *Service) callbackOverdue(ctx context.Context, since *time.Time) bool {
	return s.waitOverdue(ctx, since, s.cfg.DeployCallbackTimeout)
}

// waitOverdue reports whether a node waiting since since has waited past
// timeout (0: forever), by the database's clock.
func (s *Service) waitOverdue(ctx context.Context, since *time.Time, timeout time.Duration) bool {
	if timeout <= 0 || since == nil {
		return false
	}
	now, err := s.db.Now(ctx)
	return err == nil && now.Sub(*since) > timeout
}

func isStuck(st states.State) bool {
	for _, s := range states.StuckStates {
		if s == st {
			return true
		}
	}
	return false
}
