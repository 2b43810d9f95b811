package conductor

import (
	"context"
	"fmt"
	"net/http"

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

// errRescueFailure is Ironic's InstanceRescueFailure. Ironic answers it
// 500; Rivet answers 400, since what fails is the client's request for a
// node that cannot be rescued, not the server.
func errRescueFailure(n *objects.Node, reason string) error {
	return classed("InstanceRescueFailure", http.StatusBadRequest, nil,
		"Failed to rescue instance %s for node %s: %s", instanceOf(n), n.UUID, reason)
}

// errUnrescueFailure is Ironic's InstanceUnrescueFailure (400 here, as
// errRescueFailure).
func errUnrescueFailure(n *objects.Node, reason string) error {
	return classed("InstanceUnrescueFailure", http.StatusBadRequest, nil,
		"Failed to unrescue instance %s for node %s: %s", instanceOf(n), n.UUID, reason)
}

// instanceOf is the node's instance UUID as Ironic's messages print it.
func instanceOf(n *objects.Node) string {
	if n.InstanceUUID == nil {
		return "None"
	}
	return *n.InstanceUUID
}

// doNodeRescue validates and starts a rescue: the node moves to rescuing
// before the call returns, its rescue interface runs in the background.
func (s *Service) doNodeRescue(ctx context.Context, p rpc.Params) (any, error) {
	password, err := p.String("rescue_password")
	if err != nil {
		return nil, err
	}
	t, err := s.acquireParam(ctx, p, "node rescue")
	if err != nil {
		return nil, err
	}
	var r RescueInterface
	prepare := func() error {
		n := t.Node
		if n.Maintenance {
			return classed("NodeInMaintenance", http.StatusBadRequest, nil,
				"The rescuing operation can't be performed on node %s because it's in maintenance mode.", n.UUID)
		}
		var err error
		if r, err = s.rescuer(n); err == nil {
			err = r.Validate(ctx, n)
		}
		if err != nil {
			return errRescueFailure(n, "Validation failed: "+err.Error())
		}
		if err := fire(n, states.RescueEv, "rescue"); err != nil {
			return err
		}
		ii := cloneMap(n.InstanceInfo)
		ii["rescue_password"] = password
		n.InstanceInfo = ii
		n.LastError = nil
		return t.Save(ctx)
	}
	return nil, s.startWork(ctx, t, prepare, func(ctx context.Context, t *Task) { s.rescueWork(ctx, t, r) })
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
	t, err := s.acquireParam(ctx, p, "node unrescue")
	if err != nil {
		return nil, err
	}
	var r RescueInterface
	prepare := func() error {
		n := t.Node
		if n.Maintenance {
			return classed("NodeInMaintenance", http.StatusBadRequest, nil,
				"The unrescuing operation can't be performed on node %s because it's in maintenance mode.", n.UUID)
		}
		var err error
		if r, err = s.rescuer(n); err == nil {
			err = r.Validate(ctx, n)
		}
		if err != nil {
			return errUnrescueFailure(n, "Validation failed: "+err.Error())
		}
		if err := fire(n, states.Unrescue, "unrescue"); err != nil {
			return err
		}
		n.LastError = nil
		return t.Save(ctx)
	}
	return nil, s.startWork(ctx, t, prepare, func(ctx context.Context, t *Task) {
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
