package conductor

import (
	"context"
	"net/http"

	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/plugins"
)

// doNodeDeploy starts a deploy (or rebuild): the node moves to deploying
// before the call returns, the driver's deploy interface runs in the
// background.
func (s *Service) doNodeDeploy(ctx context.Context, p rpc.Params) (any, error) {
	var rebuild bool
	var configdrive any
	if err := p.Decode("rebuild", &rebuild); err != nil {
		return nil, err
	}
	if err := p.Decode("configdrive", &configdrive); err != nil {
		return nil, err
	}
	var rawSteps []map[string]any
	if err := p.Decode("deploy_steps", &rawSteps); err != nil {
		return nil, err
	}
	userSteps, err := parseDeploySteps(rawSteps)
	if err != nil {
		return nil, err
	}
	t, err := s.acquireParam(ctx, p, "node deployment")
	if err != nil {
		return nil, err
	}
	ev, action := states.Deploy, "active"
	if rebuild {
		ev, action = states.Rebuild, "rebuild"
	}
	prepare := func() error {
		n := t.Node
		if rebuild && n.Protected {
			return errProtected(n)
		}
		if n.Maintenance {
			return errMaintenance(action, n.UUID)
		}
		hw, err := s.hardware(n)
		if err != nil {
			return err
		}
		if err := s.requireInterface(n, catalog.Deploy); err != nil {
			return err
		}
		for _, iface := range []string{"power", "deploy"} {
			if v := s.validateInterface(ctx, n, hw, iface); !v.Result {
				return classed("InstanceDeployFailure", http.StatusBadRequest, nil,
					"Failed to validate deploy or power info for node %s. Error: %s", n.UUID, deref(v.Reason))
			}
		}
		if err := s.prepareDeploySteps(ctx, n, rawSteps, userSteps); err != nil {
			return err
		}
		if err := fire(n, ev, action); err != nil {
			return err
		}
		if configdrive != nil {
			ii := cloneMap(n.InstanceInfo)
			ii["configdrive"] = configdrive
			n.InstanceInfo = ii
		}
		n.LastError = nil
		return t.Save(ctx)
	}
	return nil, s.startWork(ctx, t, prepare, s.deployWork)
}

// doNodeTearDown starts tearing a node down: deleting, then cleaning (clean
// steps only with automated_clean), then available.
func (s *Service) doNodeTearDown(ctx context.Context, p rpc.Params) (any, error) {
	t, err := s.acquireParam(ctx, p, "node tear down")
	if err != nil {
		return nil, err
	}
	prepare := func() error {
		n := t.Node
		if n.Protected {
			return errProtected(n)
		}
		if _, err := s.hardware(n); err != nil {
			return err
		}
		if err := fire(n, states.Delete, "deleted"); err != nil {
			return err
		}
		n.LastError = nil
		return t.Save(ctx)
	}
	return nil, s.startWork(ctx, t, prepare, s.tearDownWork)
}

// doNodeClean starts manual cleaning of a manageable node with the given
// steps; the node returns to manageable.
func (s *Service) doNodeClean(ctx context.Context, p rpc.Params) (any, error) {
	var steps []map[string]any
	if err := p.Decode("clean_steps", &steps); err != nil {
		return nil, err
	}
	parsed, err := parseCleanSteps(steps)
	if err != nil {
		return nil, err
	}
	var noRamdisk bool
	if p.Has("disable_ramdisk") {
		if err := p.Decode("disable_ramdisk", &noRamdisk); err != nil {
			return nil, err
		}
	}
	t, err := s.acquireParam(ctx, p, "node manual cleaning")
	if err != nil {
		return nil, err
	}
	prepare := func() error {
		n := t.Node
		hw, err := s.hardware(n)
		if err != nil {
			return err
		}
		if err := s.checkInterfaceSteps(n, hw, parsed); err != nil {
			return err
		}
		if err := fire(n, states.Clean, "clean"); err != nil {
			return err
		}
		setState(n, states.Cleaning, states.Manageable)
		n.LastError = nil
		dii := cloneMap(n.DriverInternalInfo)
		delete(dii, diiCleanDisableRamdisk)
		if noRamdisk && s.isDirect(n) { // other deploys never boot a ramdisk to clean
			dii[diiCleanDisableRamdisk] = true
		}
		n.DriverInternalInfo = dii
		return t.Save(ctx)
	}
	return nil, s.startWork(ctx, t, prepare, func(ctx context.Context, t *Task) {
		s.cleanWork(ctx, t, parsed, true)
	})
}

// parseCleanSteps checks manual clean steps: each names an interface and a
// step; args is optional.
func parseCleanSteps(steps []map[string]any) ([]plugins.CleanStep, error) {
	if len(steps) == 0 {
		return nil, errInvalidParameter("clean_steps must be specified when target is \"clean\"")
	}
	out := make([]plugins.CleanStep, 0, len(steps))
	for i, st := range steps {
		iface, _ := st["interface"].(string)
		name, _ := st["step"].(string)
		if iface == "" || name == "" {
			return nil, errInvalidParameter("clean_steps[%d]: each clean step needs an \"interface\" and a \"step\"", i)
		}
		args, _ := st["args"].(map[string]any)
		out = append(out, plugins.CleanStep{Interface: plugins.Interface(iface), Step: name, Args: args})
	}
	return out, nil
}

// doProvisioningAction runs manage, provide, abort, adopt or unhold (RPC
// 1.6; a node in service hold).
func (s *Service) doProvisioningAction(ctx context.Context, p rpc.Params) (any, error) {
	action, err := p.String("action")
	if err != nil {
		return nil, err
	}
	switch action {
	case "manage", "provide", "abort", "adopt", "unhold":
	default:
		id, _ := p.String("node_id")
		return nil, errInvalidParameter("The requested action \"%s\" can not be performed on node \"%s\": use inspect_hardware, do_node_deploy, do_node_tear_down or do_node_clean.", action, id)
	}
	t, err := s.acquireParam(ctx, p, "provision action "+action)
	if err != nil {
		return nil, err
	}
	n := t.Node
	if _, err := s.hardware(n); err != nil {
		t.Release(ctx)
		return nil, err
	}
	if action == "provide" && n.ProvisionState == string(states.Manageable) && n.Retired {
		t.Release(ctx)
		return nil, errRetired("providing", n)
	}
	switch {
	case action == "manage" && n.ProvisionState == string(states.Enroll):
		return nil, s.startWork(ctx, t, func() error { return s.fireAndSave(ctx, t, states.Manage, action) }, s.verifyWork)
	case action == "provide" && s.automatedClean(n):
		return nil, s.startWork(ctx, t, func() error { return s.fireAndSave(ctx, t, states.Provide, action) },
			func(ctx context.Context, t *Task) { s.cleanWork(ctx, t, nil, false) })
	case action == "adopt":
		return nil, s.startWork(ctx, t, func() error { return s.fireAndSave(ctx, t, states.Adopt, action) }, s.adoptWork)
	case action == "unhold" && n.ProvisionState == string(states.ServiceHold):
		return nil, s.unholdService(ctx, t)
	}
	if action == "abort" && n.ProvisionState == string(states.DeployWait) {
		if s.deployAbortsLater(n) {
			return withLease(ctx, t, func() (any, error) { return nil, s.abortDeployWait(ctx, t) })
		}
		return nil, s.startWork(ctx, t, func() error { return nil },
			func(ctx context.Context, t *Task) { s.abortDeploy(ctx, t, states.Abort) })
	}
	// Instant transitions: manage from a failure state, provide without
	// automated cleaning (cleaning is skipped), abort of a wait state.
	defer t.Release(ctx)
	if action == "abort" && (n.ProvisionState == string(states.ServiceFailed) || n.ProvisionState == string(states.ServiceWait) ||
		n.ProvisionState == string(states.ServiceHold)) {
		if err := abortService(n); err != nil {
			return nil, err
		}
		if err := t.Save(ctx); err != nil {
			return nil, err
		}
		s.nodeLog(ctx, n).Info("service aborted", "provision_state", n.ProvisionState)
		return nil, nil
	}
	if action == "abort" && n.ProvisionState == string(states.InspectWait) {
		if err := s.abortAgentInspection(ctx, t); err != nil {
			return nil, err
		}
		s.nodeLog(ctx, n).Info("inspection aborted", "provision_state", n.ProvisionState)
		return nil, nil
	}
	ev := states.Event(action)
	if err := fire(n, ev, action); err != nil {
		return nil, err
	}
	switch action {
	case "provide":
		if err := fire(n, states.Done, action); err != nil {
			return nil, err
		}
	case "abort":
		n.LastError = ptr("Operation aborted by request.")
	}
	if err := t.Save(ctx); err != nil {
		return nil, err
	}
	s.nodeLog(ctx, n).Info("provision state changed", "action", action, "provision_state", n.ProvisionState)
	return nil, nil
}

// fireAndSave applies ev, clears last_error and saves.
func (s *Service) fireAndSave(ctx context.Context, t *Task, ev states.Event, action string) error {
	if err := fire(t.Node, ev, action); err != nil {
		return err
	}
	t.Node.LastError = nil
	return t.Save(ctx)
}

// inspectHardware starts inspection: inspecting, then manageable with the
// inventory in properties and a port per new NIC.
func (s *Service) inspectHardware(ctx context.Context, p rpc.Params) (any, error) {
	t, err := s.acquireParam(ctx, p, "hardware inspection")
	if err != nil {
		return nil, err
	}
	prepare := func() error {
		n := t.Node
		if _, err := s.hardware(n); err != nil {
			return err
		}
		if err := s.requireInterface(n, catalog.Inspect); err != nil {
			return err
		}
		if s.usesAgentInspect(n) {
			// Ironic's inspect.validate before the state changes: 400.
			if v := s.validateAgentInspect(n); !v.Result {
				return classed("MissingParameterValue", http.StatusBadRequest, nil, "%s", deref(v.Reason))
			}
		}
		if err := fire(n, states.Inspect, "inspect"); err != nil {
			return err
		}
		now := *n.ProvisionUpdatedAt
		n.InspectionStartedAt, n.InspectionFinishedAt, n.LastError = &now, nil, nil
		return t.Save(ctx)
	}
	return nil, s.startWork(ctx, t, prepare, s.inspectWork)
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
