package conductor

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
)

// Rescue (REST API 1.38, RPC 1.5): the rescue and unrescue verbs move an
// active node through Ironic's rescue states. What boots the rescue
// environment is the node's rescue interface. Every hardware type offers
// only no-rescue today, which refuses as Ironic's NoRescue does; a real
// implementation (the agent's, booting the ramdisk with the rescue
// password) plugs in through Deps.Rescue under the name the catalog offers.

// RescueInterface is one rescue implementation the conductor runs,
// registered in Deps.Rescue under its name (the node's rescue_interface).
type RescueInterface interface {
	// Validate checks that the node can be rescued (Ironic's
	// RescueInterface.validate); its error is shown to the client.
	Validate(ctx context.Context, n *objects.Node) error
	// Rescue boots the rescue environment, the password in the node's
	// instance_info["rescue_password"]. It returns states.Done when the
	// node is in rescue, or states.Wait when the node will call back (an
	// agent's heartbeat finishes it).
	Rescue(ctx context.Context, t *Task) (states.Event, error)
	// Unrescue boots the node back into its instance.
	Unrescue(ctx context.Context, t *Task) error
}

// rescuePasswordKeys are the instance_info keys a rescue sets and an
// unrescue (or failed rescue) removes.
var rescuePasswordKeys = []string{"rescue_password", "hashed_rescue_password"}

// rescuer returns the rescue implementation node n uses, or Ironic's
// UnsupportedDriverExtension when it does nothing (no-rescue, or a name no
// implementation is registered for).
func (s *Service) rescuer(n *objects.Node) (RescueInterface, error) {
	impl, err := s.nodeInterface(n, catalog.Rescue)
	if err != nil {
		return nil, err
	}
	if r, ok := s.rescuers[impl]; ok && impl != "" && !catalog.Unsupported(impl) {
		return r, nil
	}
	return nil, errUnsupported(n.Driver, catalog.Rescue)
}

// rescueFailure is Ironic's InstanceRescueFailure (class "Rescue") or
// InstanceUnrescueFailure ("Unrescue"). Ironic answers them 500; Rivet
// answers 400, since what fails is the client's request for a node that
// cannot be rescued, not the server.
func rescueFailure(op string, n *objects.Node, reason string) error {
	return classed("Instance"+op+"Failure", http.StatusBadRequest, nil,
		"Failed to %s instance %s for node %s: %s", strings.ToLower(op), instanceOf(n), n.UUID, reason)
}

// instanceOf is the node's instance UUID as Ironic's messages print it.
func instanceOf(n *objects.Node) string {
	if n.InstanceUUID == nil {
		return "None"
	}
	return *n.InstanceUUID
}

// startRescueVerb validates and starts rescue or unrescue (verb, firing
// ev): refused in maintenance or when the rescue interface does nothing or
// does not validate; otherwise the node moves to rescuing or unrescuing
// (with extra applied) before the call returns, and work runs the rescue
// interface in the background.
func (s *Service) startRescueVerb(ctx context.Context, p rpc.Params, verb string, ev states.Event, extra func(n *objects.Node),
	work func(ctx context.Context, t *Task, r RescueInterface)) error {
	t, err := s.acquireParam(ctx, p, "node "+verb)
	if err != nil {
		return err
	}
	var r RescueInterface
	prepare := func() error {
		n := t.Node
		if n.Maintenance {
			return classed("NodeInMaintenance", http.StatusBadRequest, nil,
				"The %sing operation can't be performed on node %s because it's in maintenance mode.", verb, n.UUID)
		}
		var err error
		if r, err = s.rescuer(n); err == nil {
			err = r.Validate(ctx, n)
		}
		if err != nil {
			op := "Rescue"
			if verb == "unrescue" {
				op = "Unrescue"
			}
			return rescueFailure(op, n, "Validation failed: "+err.Error())
		}
		if err := fire(n, ev, verb); err != nil {
			return err
		}
		if extra != nil {
			extra(n)
		}
		n.LastError = nil
		return t.Save(ctx)
	}
	return s.startWork(ctx, t, prepare, func(ctx context.Context, t *Task) { work(ctx, t, r) })
}

// doNodeRescue validates and starts a rescue: the node moves to rescuing
// with the password in instance_info before the call returns, its rescue
// interface runs in the background.
func (s *Service) doNodeRescue(ctx context.Context, p rpc.Params) (any, error) {
	password, err := p.String("rescue_password")
	if err != nil {
		return nil, err
	}
	keep := func(n *objects.Node) {
		ii := cloneMap(n.InstanceInfo)
		ii["rescue_password"] = password
		n.InstanceInfo = ii
	}
	return nil, s.startRescueVerb(ctx, p, "rescue", states.RescueEv, keep, s.rescueWork)
}

// rescueWork runs the rescue interface: rescue (or rescue wait, for an
// implementation the node calls back to), or rescue failed without the
// password.
func (s *Service) rescueWork(ctx context.Context, t *Task, r RescueInterface) {
	ev, err := r.Rescue(ctx, t)
	if err == nil && ev != states.Done && ev != states.Wait {
		err = fmt.Errorf("rescue interface returned event %q, want done or wait", ev)
	}
	if err != nil {
		dropKeys(t.Node, rescuePasswordKeys)
		s.fail(ctx, t, fmt.Errorf("rescue failed: %w", err))
		return
	}
	s.finish(ctx, t, ev, nil)
}

// doNodeUnrescue validates and starts an unrescue: unrescuing, then active
// without the rescue password.
func (s *Service) doNodeUnrescue(ctx context.Context, p rpc.Params) (any, error) {
	return nil, s.startRescueVerb(ctx, p, "unrescue", states.Unrescue, nil, func(ctx context.Context, t *Task, r RescueInterface) {
		if err := r.Unrescue(ctx, t); err != nil {
			s.fail(ctx, t, fmt.Errorf("unrescue failed: %w", err))
			return
		}
		s.finish(ctx, t, states.Done, func(n *objects.Node) { dropKeys(n, rescuePasswordKeys) })
	})
}

// dropKeys removes keys from the node's instance_info.
func dropKeys(n *objects.Node, keys []string) {
	ii := cloneMap(n.InstanceInfo)
	for _, k := range keys {
		delete(ii, k)
	}
	n.InstanceInfo = ii
}
