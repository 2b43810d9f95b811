package conductor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/rivetmetal/rivet/core/clock"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/plugins"
)

// AgentCallbackKey is the instance_info key that makes a deploy wait in
// "wait call-back" for the ramdisk agent's heartbeat after the driver's
// deploy step (a Rivet extension: the driver SDK's Deploy has no way to
// say "wait"). deploy_callback_timeout bounds the wait.
const AgentCallbackKey = "agent_callback"

// fail records a failed operation: the failure event from the node's
// current state, last_error naming what failed, and the save.
func (s *Service) fail(ctx context.Context, t *Task, err error) {
	n := t.Node
	log := t.log
	if ctx.Err() != nil {
		err = errors.Join(err, errors.New("conductor "+s.cfg.Hostname+" shut down before the operation finished"))
	}
	if ferr := fire(n, states.Fail, ""); ferr != nil {
		log.Error("cannot record failure: no fail transition", "provision_state", n.ProvisionState, "error", ferr)
	}
	n.LastError = ptr(err.Error())
	n.TargetPowerState = nil
	if n.ProvisionState == string(states.DeployFailed) {
		n.DeployStep = map[string]any{} // Ironic's deploying_error_handler
	}
	log.Warn("operation failed", "provision_state", n.ProvisionState, "error", err)
	s.save(context.WithoutCancel(ctx), t)
}

// save writes the node under t's lease and logs a failure (a lost lease
// means another conductor owns the node now). Background work has no
// client to answer and no one else may write the node while it holds the
// lease, so a database that is busy or unreachable for the moment
// (SQLite's write lock under load, a PostgreSQL restart) is waited for:
// the save is retried, backing off, for up to saveRetryFor while the lease
// holds. Giving up at the first SQLITE_BUSY left nodes in "deploying" with
// no lease and no error under a load of concurrent deploys (the agent
// deploy benchmark); the fenced save writes the same columns again, so a
// retry is safe.
func (s *Service) save(ctx context.Context, t *Task) bool {
	wait, deadline := 50*time.Millisecond, time.Now().Add(saveRetryFor)
	for {
		err := t.Save(ctx)
		if err == nil {
			return true
		}
		if !db.IsUnavailable(err) || t.Lost() || time.Now().After(deadline) {
			t.log.Error("saving node failed", "error", err)
			return false
		}
		t.log.Warn("saving node: the database is busy or unavailable; retrying", "error", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			t.log.Error("saving node failed", "error", err)
			return false
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// saveRetryFor bounds how long background work waits for the database to
// save a node it holds the lease of.
const saveRetryFor = 2 * time.Minute

// step runs one driver operation of a background task and records the
// failure if it fails.
func (s *Service) step(ctx context.Context, t *Task, op string, fn func(ctx context.Context, hw Hardware, pn plugins.Node) error) bool {
	hw, err := s.hardware(t.Node)
	if err == nil {
		err = s.driverCall(ctx, t.Node, op, func(ctx context.Context, pn plugins.Node) error { return fn(ctx, hw, pn) })
	}
	if err == nil && t.Lost() {
		return false
	}
	if err != nil {
		s.fail(ctx, t, err)
		return false
	}
	return true
}

// finish fires ev (done, wait, manage), runs extra and saves.
func (s *Service) finish(ctx context.Context, t *Task, ev states.Event, extra func(n *objects.Node)) {
	n := t.Node
	if err := fire(n, ev, ""); err != nil {
		s.fail(ctx, t, err)
		return
	}
	if extra != nil {
		extra(n)
	}
	if s.save(ctx, t) {
		t.log.Info("provision state changed", "provision_state", n.ProvisionState)
	}
}

// deployWork prepares and deploys through the driver, then the node is
// active (or waits for its agent).
func (s *Service) deployWork(ctx context.Context, t *Task) {
	if s.isDirect(t.Node) {
		s.directDeployWork(ctx, t)
		return
	}
	if !s.step(ctx, t, "prepare deploy", func(ctx context.Context, hw Hardware, pn plugins.Node) error { return hw.PrepareDeploy(ctx, pn) }) ||
		!s.step(ctx, t, "deploy", func(ctx context.Context, hw Hardware, pn plugins.Node) error { return hw.Deploy(ctx, pn) }) {
		return
	}
	if wait, _ := t.Node.InstanceInfo[AgentCallbackKey].(bool); wait {
		s.finish(ctx, t, states.Wait, nil)
		return
	}
	s.finish(ctx, t, states.Done, s.deployed)
}

// deployed records that this conductor deployed (or adopted) the node.
func (s *Service) deployed(n *objects.Node) {
	n.ConductorAffinity = ptr(s.conductorID.Load())
	n.PowerState = ptr(string(plugins.PowerOn))
}

// tearDownWork undeploys through the driver, then cleans (automated_clean)
// or skips cleaning, and the node is available.
func (s *Service) tearDownWork(ctx context.Context, t *Task) {
	if !s.step(ctx, t, "tear down", func(ctx context.Context, hw Hardware, pn plugins.Node) error { return hw.TearDown(ctx, pn) }) {
		return
	}
	n := t.Node
	n.PowerState = ptr(string(plugins.PowerOff))
	n.InstanceInfo, n.InstanceUUID, n.ConductorAffinity = map[string]any{}, nil, nil
	if err := fire(n, states.Clean, ""); err != nil {
		s.fail(ctx, t, err)
		return
	}
	if !s.save(ctx, t) {
		return
	}
	// The instance is gone: so is its allocation, as in Ironic.
	if err := s.removeNodeAllocation(ctx, t); err != nil {
		s.fail(ctx, t, err)
		return
	}
	if s.automatedClean(n) {
		s.cleanWork(ctx, t, nil, false)
		return
	}
	s.finish(ctx, t, states.Done, nil)
}

// cleanWork runs clean steps: the given ones (manual cleaning, back to
// manageable) or the driver's with a positive priority, highest first
// (automated cleaning, on to available). A driver without clean steps has
// nothing to run.
func (s *Service) cleanWork(ctx context.Context, t *Task, steps []plugins.CleanStep, manual bool) {
	s.updateCache(ctx, t) // Ironic's node_update_cache as cleaning starts
	if s.isDirect(t.Node) {
		s.agentCleanWork(ctx, t, steps, manual)
		return
	}
	hw, err := s.hardware(t.Node)
	if err != nil {
		s.fail(ctx, t, err)
		return
	}
	if !manual {
		lctx, cancel := s.driverContext(ctx, 0)
		all, err := hw.ListCleanSteps(lctx, pluginNode(t.Node))
		cancel()
		switch {
		case errors.Is(err, plugins.ErrNotSupported):
		case err != nil:
			s.fail(ctx, t, driverError(t.Node.Driver, bmcOf(t.Node), "list clean steps", err))
			return
		}
		for _, st := range all {
			if st.Priority > 0 {
				steps = append(steps, st)
			}
		}
		slices.SortStableFunc(steps, func(a, b plugins.CleanStep) int { return b.Priority - a.Priority })
	}
	for _, st := range steps {
		t.Node.CleanStep = map[string]any{"interface": string(st.Interface), "step": st.Step, "args": st.Args}
		if !s.save(ctx, t) {
			return
		}
		if st.Interface == plugins.InterfaceRAID {
			// The raid interface's steps are the conductor's (raid.go).
			if err := s.runRAIDStep(ctx, t, st); err != nil {
				if !t.Lost() {
					s.fail(ctx, t, fmt.Errorf("Node %s failed clean step raid.%s: %w", t.Node.UUID, st.Step, err))
					s.cleanStepFailed(ctx, t)
				}
				return
			}
			continue
		}
		if !s.step(ctx, t, "execute clean step "+st.Step, func(ctx context.Context, hw Hardware, pn plugins.Node) error {
			return s.executeCleanStep(ctx, t.Node, hw, pn, st)
		}) {
			s.cleanStepFailed(ctx, t)
			return
		}
		s.afterStep(ctx, t, st)
	}
	s.updateCache(ctx, t)
	t.Node.CleanStep = map[string]any{}
	// A retired node goes back to manageable after automated cleaning
	// rather than to available (Ironic's do_next_clean_step).
	if manual || t.Node.Retired {
		s.finish(ctx, t, states.Manage, nil)
		return
	}
	s.finish(ctx, t, states.Done, nil)
}

// cleanStepFailed puts a node whose clean step failed in maintenance with
// the fault "clean failure" (API 1.42), as Ironic's cleaning_error_handler
// does when a step was running; ending maintenance clears the fault.
func (s *Service) cleanStepFailed(ctx context.Context, t *Task) {
	if t.Lost() {
		return
	}
	t.Node.Maintenance = true
	t.Node.Fault = ptr(objects.FaultCleanFailure)
	s.save(context.WithoutCancel(ctx), t)
}

// verifyWork checks the BMC answers (reads the power state): enroll →
// manageable.
func (s *Service) verifyWork(ctx context.Context, t *Task) {
	var ps plugins.PowerState
	if !s.step(ctx, t, "get power state", func(ctx context.Context, hw Hardware, pn plugins.Node) (err error) {
		ps, err = hw.GetPowerState(ctx, pn)
		return err
	}) {
		return
	}
	s.cacheBootMode(ctx, t)
	s.updateCache(ctx, t)
	s.finish(ctx, t, states.Done, func(n *objects.Node) { n.PowerState = ptr(string(ps)) })
}

// adoptWork takes an already deployed node under management: adopting →
// active with this conductor's affinity.
func (s *Service) adoptWork(ctx context.Context, t *Task) {
	var ps plugins.PowerState
	if !s.step(ctx, t, "get power state", func(ctx context.Context, hw Hardware, pn plugins.Node) (err error) {
		ps, err = hw.GetPowerState(ctx, pn)
		return err
	}) {
		return
	}
	s.finish(ctx, t, states.Done, func(n *objects.Node) {
		n.ConductorAffinity = ptr(s.conductorID.Load())
		n.PowerState = ptr(string(ps))
	})
}

// inspectWork reads the inventory into properties and creates a port for
// every NIC whose MAC address no port has yet.
func (s *Service) inspectWork(ctx context.Context, t *Task) {
	if s.usesAgentInspect(t.Node) {
		s.agentInspectWork(ctx, t)
		return
	}
	var inv plugins.Inventory
	if !s.step(ctx, t, "inspect", func(ctx context.Context, hw Hardware, pn plugins.Node) (err error) {
		inv, err = hw.Inspect(ctx, pn)
		return err
	}) {
		return
	}
	s.cacheBootMode(ctx, t)
	n := t.Node
	props := cloneMap(n.Properties)
	props["cpus"], props["cpu_arch"], props["memory_mb"], props["local_gb"] = inv.CPUs, inv.CPUArch, inv.MemoryMB, inv.LocalGB
	n.Properties = props
	for _, nic := range inv.NICs {
		port := &objects.Port{UUID: uuid.NewString(), Address: nic.MACAddress, NodeID: n.ID, PXEEnabled: true,
			Extra: map[string]any{}, LocalLinkConnection: map[string]any{}, InternalInfo: map[string]any{}}
		if err := s.store.Create(ctx, port); err != nil {
			if db.IsUniqueViolation(err) {
				continue // a port with this MAC exists already
			}
			s.fail(ctx, t, err)
			return
		}
		t.log.Info("port created from inspection", "port", port.UUID, "address", port.Address)
	}
	// Ironic runs the inspection rules after out-of-band inspection too,
	// on the inventory the BMC gave, in the agent's shape.
	if err := s.applyInspectionRules(ctx, t, outOfBandInventory(inv), map[string]any{}); err != nil {
		s.fail(ctx, t, fmt.Errorf("Failed to finish inspection: %w", err))
		return
	}
	s.cacheFirmware(ctx, t, nil)
	s.finish(ctx, t, states.Done, func(n *objects.Node) {
		now := clock.Now()
		n.InspectionFinishedAt = &now
	})
}
