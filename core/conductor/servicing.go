package conductor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/pyrepr"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/core/steps"
	"github.com/rivetmetal/rivet/plugins"
)

// Servicing (REST API 1.87, RPC 1.5), as Ironic's conductor/servicing.py:
// an active node (or one whose servicing failed) runs the service steps
// it is given, in order, and returns to active. A step is one the node's
// driver offers for servicing (plugins.CleanStep.Phases holds
// plugins.PhaseService; the raid interface's steps are the conductor's,
// see raid.go). Rivet runs every service step out of band, through the
// driver plugin: a step that needs the agent ramdisk (a deploy-interface
// step of the direct deploy) fails the servicing with a message saying
// so, which is what Ironic does too with disable_ramdisk (1.108). A failed
// step leaves the node in "service failed", in maintenance with the fault
// "service failure" (API 1.42); "service" again retries, "abort" returns
// it to active, "rescue" rescues it.
//
// Ironic's reserved step names are the conductor's own, on any interface
// name (steps.py's use_reserved_step_handler): power_on, power_off and
// reboot act on the node's power; wait pauses for args.seconds (at most
// [conductor] max_conductor_wait_step_seconds) in "service wait"; hold
// stops the steps in "service hold", where the node may be changed, until
// "unhold" (API 1.85) runs the steps after it, "service" starts new ones
// or "abort" returns it to active.

// driver_internal_info keys of servicing, as Ironic's.
const (
	diiServiceSteps          = "service_steps"
	diiServiceStepIndex      = "service_step_index"
	diiServiceDisableRamdisk = "service_disable_ramdisk"
)

// serviceKeys are the keys wiped when servicing ends.
var serviceKeys = []string{diiServiceSteps, diiServiceStepIndex, diiServiceDisableRamdisk}

// doNodeService validates and starts servicing: refused in maintenance
// and when the power interface does not validate (400, as Ironic's
// do_node_service); otherwise the node is in servicing before the call
// returns and the steps run in the background.
func (s *Service) doNodeService(ctx context.Context, p rpc.Params) (any, error) {
	var raw []map[string]any
	if err := p.Decode("service_steps", &raw); err != nil {
		return nil, err
	}
	var disableRamdisk bool
	if err := p.Decode("disable_ramdisk", &disableRamdisk); err != nil {
		return nil, err
	}
	requested, err := parseSteps("service_steps", "service", raw)
	if err != nil {
		return nil, err
	}
	t, err := s.acquireParam(ctx, p, "node service")
	if err != nil {
		return nil, err
	}
	prepare := func() error {
		n := t.Node
		if n.Maintenance {
			return errMaintenance("service", n.UUID)
		}
		hw, err := s.hardware(n)
		if err != nil {
			return err
		}
		if v := s.validateInterface(ctx, n, hw, "power"); !v.Result {
			return errInvalidParameter("Validation of node %s for servicing failed: %s", n.UUID, deref(v.Reason))
		}
		if err := fire(n, states.ServiceEv, "service"); err != nil {
			return err
		}
		dii := cloneMap(n.DriverInternalInfo)
		for _, k := range serviceKeys {
			delete(dii, k)
		}
		list := make([]any, len(raw))
		for i, st := range raw {
			list[i] = st
		}
		dii[diiServiceSteps], dii[diiServiceDisableRamdisk] = list, disableRamdisk
		n.DriverInternalInfo = dii
		n.ServiceStep = map[string]any{}
		n.LastError = nil
		return t.Save(ctx)
	}
	return nil, s.startWork(ctx, t, prepare, func(ctx context.Context, t *Task) { s.serviceWork(ctx, t, requested, 0) })
}

// unholdService is the unhold verb on a node in service hold: it waits in
// service wait until the steps after the hold run in the background.
func (s *Service) unholdService(ctx context.Context, t *Task) error {
	prepare := func() error { return s.fireAndSave(ctx, t, states.Unhold, "unhold") }
	return s.startWork(ctx, t, prepare, func(ctx context.Context, t *Task) {
		n := t.Node
		raw, _ := n.DriverInternalInfo[diiServiceSteps].([]any)
		list := make([]map[string]any, 0, len(raw))
		for _, st := range raw {
			m, _ := st.(map[string]any)
			list = append(list, m)
		}
		from, ok := toInt(n.DriverInternalInfo[diiServiceStepIndex])
		requested, err := parseSteps("service_steps", "service", list)
		if err == nil && (!ok || from < 0 || from >= len(requested)) {
			err = fmt.Errorf("the held step's index %v is not one of the %d service steps", n.DriverInternalInfo[diiServiceStepIndex], len(requested))
		}
		if err == nil {
			err = fire(n, states.Resume, "unhold")
		}
		if err != nil {
			s.serviceFailed(ctx, t, fmt.Errorf("Cannot resume servicing node %s after its hold: %w", n.UUID, err))
			return
		}
		t.log.Info("service unheld; running the steps after the hold", "from", from+1, "steps", len(requested))
		s.serviceWork(ctx, t, requested, from+1)
	})
}

// parseSteps checks user steps (clean or service): each names an
// interface and a step; args is optional.
func parseSteps(arg, kind string, steps []map[string]any) ([]plugins.CleanStep, error) {
	if len(steps) == 0 {
		return nil, errInvalidParameter("%s must be specified when target is %q", arg, kind)
	}
	out := make([]plugins.CleanStep, 0, len(steps))
	for i, st := range steps {
		iface, _ := st["interface"].(string)
		name, _ := st["step"].(string)
		if iface == "" || name == "" {
			return nil, errInvalidParameter("%s[%d]: each %s step needs an \"interface\" and a \"step\"", arg, i, kind)
		}
		args, _ := st["args"].(map[string]any)
		out = append(out, plugins.CleanStep{Interface: plugins.Interface(iface), Step: name, Args: args})
	}
	return out, nil
}

// serviceWork matches the requested steps with those the node offers for
// servicing, then runs them in order from index from; the node returns to
// active, or rests in service hold after a hold step.
func (s *Service) serviceWork(ctx context.Context, t *Task, requested []plugins.CleanStep, from int) {
	n := t.Node
	offered, err := s.nodeSteps(ctx, n)
	if err != nil {
		s.serviceFailed(ctx, t, fmt.Errorf("Cannot service node %s: %w", n.UUID, err))
		return
	}
	plan := make([]plugins.CleanStep, 0, len(requested))
	for i, want := range requested {
		st := want
		switch {
		case i < from: // ran before a hold: not run again, not checked again
		case steps.Reserved(want.Step):
			err = checkReservedStep(want)
		default:
			st, err = matchStep(n, offered, want, plugins.PhaseService)
		}
		if err != nil {
			s.serviceFailed(ctx, t, fmt.Errorf("Cannot service node %s: %w", n.UUID, err))
			return
		}
		plan = append(plan, st)
	}
	for i := from; i < len(plan); i++ {
		st := plan[i]
		n.ServiceStep = cleanStepMap(st)
		dii := cloneMap(n.DriverInternalInfo)
		dii[diiServiceStepIndex] = i
		n.DriverInternalInfo = dii
		if !s.save(ctx, t) {
			return
		}
		t.log.Info("running service step", "interface", st.Interface, "step", st.Step)
		if steps.Reserved(st.Step) {
			held, err := s.runReservedServiceStep(ctx, t, st)
			switch {
			case t.Lost():
				return
			case err != nil:
				s.serviceFailed(ctx, t, fmt.Errorf("Node %s failed service step %s.%s: %w", n.UUID, st.Interface, st.Step, err))
				return
			case held:
				return
			}
			continue
		}
		if err := s.runStep(ctx, t, st); err != nil {
			if t.Lost() {
				return
			}
			s.serviceFailed(ctx, t, fmt.Errorf("Node %s failed service step %s.%s: %w", n.UUID, st.Interface, st.Step, err))
			return
		}
		if t.Lost() {
			return
		}
	}
	s.finish(ctx, t, states.Done, func(n *objects.Node) {
		n.ServiceStep = map[string]any{}
		dropInternal(n, serviceKeys)
	})
}

// serviceFailed is Ironic's servicing_error_handler: service failed with
// last_error; when a step was running, maintenance with the fault
// "service failure". The step and the plan are cleared.
func (s *Service) serviceFailed(ctx context.Context, t *Task, err error) {
	n := t.Node
	if len(n.ServiceStep) > 0 {
		n.Maintenance = true
		n.Fault = ptr(objects.FaultServiceFailure)
	}
	n.ServiceStep = map[string]any{}
	dropInternal(n, []string{diiServiceStepIndex})
	s.fail(ctx, t, err)
}

// abortService is Ironic's abort of servicing: from service wait or
// service hold the node fails then aborts (Ironic only flags a held
// node's hold step to abort after it, which unhold then does), from service failed it aborts (refused in
// maintenance, 409); either way it is active again with last_error
// saying so, the step and the plan cleared (do_node_service_abort).
func abortService(n *objects.Node) error {
	if n.ProvisionState == string(states.ServiceFailed) && n.Maintenance {
		return errInvalidState("Can not abort service on node \"%s\" while it is in maintenance mode. Please remove the node "+
			"from maintenance prior to issuing the request to abort the service operation.", n.UUID)
	}
	if n.ProvisionState == string(states.ServiceWait) || n.ProvisionState == string(states.ServiceHold) {
		if err := fire(n, states.Fail, "abort"); err != nil {
			return err
		}
	}
	if err := fire(n, states.Abort, "abort"); err != nil {
		return err
	}
	msg := "By request, the service operation was aborted"
	if iface, _ := n.ServiceStep["interface"].(string); iface != "" {
		msg += fmt.Sprintf(" during or after the completion of step \"%s.%v\"", iface, n.ServiceStep["step"])
	}
	n.LastError = &msg
	n.ServiceStep = map[string]any{}
	dropInternal(n, serviceKeys)
	return nil
}

// dropInternal removes keys from the node's driver_internal_info.
func dropInternal(n *objects.Node, keys []string) {
	dii := cloneMap(n.DriverInternalInfo)
	for _, k := range keys {
		delete(dii, k)
	}
	n.DriverInternalInfo = dii
}

// nodeSteps lists the steps node n's driver offers (every phase): the
// plugin's, and the raid, bios and firmware interfaces' when the node has
// them.
func (s *Service) nodeSteps(ctx context.Context, n *objects.Node) ([]plugins.CleanStep, error) {
	hw, err := s.hardware(n)
	if err != nil {
		return nil, err
	}
	lctx, cancel := s.driverContext(ctx, 0)
	all, err := hw.ListCleanSteps(lctx, pluginNode(n))
	cancel()
	switch {
	case errors.Is(err, plugins.ErrNotSupported):
		all = nil
	case err != nil:
		return nil, driverError(n.Driver, bmcOf(n), "list steps", err)
	}
	// The raid, bios and firmware interfaces' steps are the conductor's,
	// not the plugin's; the bios and firmware steps run in servicing too,
	// as Ironic's redfish apply_configuration, factory_reset and update.
	for _, iface := range []plugins.Interface{plugins.InterfaceRAID, plugins.InterfaceBIOS, plugins.InterfaceFirmware} {
		all = stripInterface(all, iface)
	}
	for _, st := range s.interfaceStepsFor(n, hw) {
		st.Phases = []plugins.StepPhase{plugins.PhaseClean, plugins.PhaseService}
		all = append(all, st)
	}
	return append(all, s.raidSteps(n)...), nil
}

// stripInterface drops the steps of iface.
func stripInterface(steps []plugins.CleanStep, iface plugins.Interface) []plugins.CleanStep {
	out := steps[:0:0]
	for _, st := range steps {
		if st.Interface != iface {
			out = append(out, st)
		}
	}
	return out
}

// matchStep finds the requested step among those offered for phase and
// returns it with the requested arguments; Ironic's "not supported"
// message otherwise.
func matchStep(n *objects.Node, offered []plugins.CleanStep, want plugins.CleanStep, phase plugins.StepPhase) (plugins.CleanStep, error) {
	for _, st := range offered {
		if st.Interface != want.Interface || st.Step != want.Step {
			continue
		}
		if !st.RunsIn(phase) {
			return plugins.CleanStep{}, fmt.Errorf("node does not support this %s step: %s.%s (driver %s runs it in: %s)",
				phase, want.Interface, want.Step, n.Driver, phasesOf(st))
		}
		st.Args = want.Args
		return st, nil
	}
	return plugins.CleanStep{}, fmt.Errorf("node does not support this %s step: %s.%s (driver %s does not offer it)",
		phase, want.Interface, want.Step, n.Driver)
}

func phasesOf(st plugins.CleanStep) string {
	if len(st.Phases) == 0 {
		return string(plugins.PhaseClean)
	}
	out := make([]string, len(st.Phases))
	for i, p := range st.Phases {
		out[i] = string(p)
	}
	return strings.Join(out, ", ")
}

// runStep runs one step out of band: a raid step through the raid
// interface, a bios or firmware step through its interface (then its cache
// refreshed), a deploy-interface step of a direct-deploy node needs the
// agent (refused), anything else through the plugin's ExecuteCleanStep.
func (s *Service) runStep(ctx context.Context, t *Task, st plugins.CleanStep) error {
	if st.Interface == plugins.InterfaceRAID {
		return s.runRAIDStep(ctx, t, st)
	}
	if isInterfaceStep(st) {
		hw, err := s.hardware(t.Node)
		if err != nil {
			return err
		}
		err = s.driverCall(ctx, t.Node, "execute service step "+st.Step, func(ctx context.Context, pn plugins.Node) error {
			return s.executeCleanStep(ctx, t.Node, hw, pn, st)
		})
		if err == nil {
			s.afterStep(ctx, t, st)
		}
		return err
	}
	if st.Interface == plugins.InterfaceDeploy && s.isDirect(t.Node) {
		return classed("InvalidParameterValue", http.StatusBadRequest, nil,
			"step deploy.%s runs in the agent ramdisk, which Rivet does not boot for servicing yet", st.Step)
	}
	hw, err := s.hardware(t.Node)
	if err != nil {
		return err
	}
	return s.driverCall(ctx, t.Node, "execute service step "+st.Step, func(ctx context.Context, pn plugins.Node) error {
		return hw.ExecuteCleanStep(ctx, pn, st)
	})
}

// checkReservedStep checks a reserved step's arguments before any step
// runs: wait needs a whole number of seconds (the steps run without the
// agent, whose heartbeat would end an open-ended wait in Ironic).
func checkReservedStep(st plugins.CleanStep) error {
	if st.Step != "wait" {
		return nil
	}
	raw, has := st.Args["seconds"]
	secs, ok := toInt(raw)
	if !has || !ok || secs < 0 {
		return fmt.Errorf("service step %s.wait needs args.seconds, a whole number of seconds of at least 0 (got %s): "+
			"Rivet's service steps run without the agent, so nothing would end a wait without it", st.Interface, pyrepr.Value(raw))
	}
	return nil
}

// runReservedServiceStep runs a reserved step under the node's lease; it
// reports whether the node is now held (the steps stop there).
func (s *Service) runReservedServiceStep(ctx context.Context, t *Task, st plugins.CleanStep) (held bool, err error) {
	n := t.Node
	switch st.Step {
	case "hold":
		if err := fire(n, states.Hold, "hold"); err != nil {
			return false, err
		}
		if !s.save(ctx, t) {
			return true, nil
		}
		t.log.Info("service held by a hold step; unhold runs the steps after it", "index", n.DriverInternalInfo[diiServiceStepIndex])
		return true, nil
	case "wait":
		secs, _ := toInt(st.Args["seconds"])
		d := time.Duration(secs) * time.Second
		if d > s.cfg.MaxWaitStep {
			msg := fmt.Sprintf("A wait time exceeding the configured maximum has been requested. Holding for %d, got %d.",
				int(s.cfg.MaxWaitStep/time.Second), secs)
			t.log.Warn(msg)
			s.tasks.history.record(ctx, n, severityWarning, n.ProvisionState, msg, t.requestID, t.user)
			d = s.cfg.MaxWaitStep
		}
		if err := fire(n, states.Wait, "wait"); err != nil {
			return false, err
		}
		if !s.save(ctx, t) {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(d):
		}
		if err := fire(n, states.Resume, "wait"); err != nil {
			return false, err
		}
		return false, nil
	}
	var target plugins.PowerState
	switch st.Step {
	case "power_on":
		target = plugins.PowerOn
	case "power_off":
		target = plugins.PowerOff
	default:
		target = plugins.Rebooting
	}
	if target != plugins.PowerOn && n.DisablePowerOff {
		return false, errPowerOffDisabled(string(target))
	}
	err = s.withHardware(ctx, t, "service step "+st.Step, func(ctx context.Context, hw Hardware, pn plugins.Node) error {
		return powerActor(hw).PowerAction(ctx, pn, target, 0)
	})
	if err != nil {
		return false, err
	}
	if target != plugins.PowerOn {
		// Whatever agent ran on the node does not survive it.
		n.DriverInternalInfo = agenttoken.Wipe(n.DriverInternalInfo)
	}
	n.PowerState = ptr(string(target.Final()))
	return false, nil
}
