package conductor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/db"
)

// protectedNodeFields are never taken from update_node: identity, the
// lease, and the states only the conductor moves.
var protectedNodeFields = []string{"id", "uuid", "created_at", "updated_at", "reservation",
	"provision_state", "target_provision_state", "provision_updated_at", "power_state", "target_power_state",
	"conductor_affinity"}

func objectArg[T objects.Object](p rpc.Params, name string) (T, error) {
	var zero T
	obj, err := p.Object(name)
	if err != nil {
		return zero, err
	}
	t, ok := obj.(T)
	if !ok {
		return zero, errInvalidParameter("argument %s is a %T, want a %T", name, obj, zero)
	}
	return t, nil
}

// createNode stores a new node after checking that this conductor serves
// its hardware type and the interface implementations it names; those it
// names none for get the hardware type's defaults.
func (s *Service) createNode(ctx context.Context, p rpc.Params) (any, error) {
	n, err := objectArg[*objects.Node](p, "node")
	if err != nil {
		return nil, err
	}
	if _, err := s.hardware(n); err != nil {
		return nil, err
	}
	set, err := s.store.Registry().Changed(n)
	if err != nil {
		return nil, err
	}
	if err := s.unstorable("Node", n, set); err != nil {
		return nil, err
	}
	if err := s.checkInterfaces(n); err != nil {
		return nil, err
	}
	if n.UUID == "" {
		n.UUID = uuid.NewString()
	}
	if n.ProvisionState == "" {
		n.ProvisionState = string(states.Enroll)
	}
	n.ConductorGroup = strings.ToLower(n.ConductorGroup)
	if err := s.creates.Create(ctx, n); err != nil {
		if db.IsUniqueViolation(err) {
			return nil, s.duplicateNode(ctx, n, err)
		}
		return nil, err
	}
	// nodeLog's attributes, without building its logger (once per node
	// enrolled): the same line.
	s.log.Info("node created", "node", n.UUID, "request_id", rpc.RequestID(ctx), "driver", n.Driver)
	return n, nil
}

// duplicateNode names the unique column n collides on, with the API's
// answers and in its order (core/api checkNodeUnique): UUID, name, then
// instance UUID. The API checks before calling, so this answers a create or
// an update that lost a race, or one the API did not check.
func (s *Service) duplicateNode(ctx context.Context, n *objects.Node, err error) error {
	if other, gerr := s.store.GetNode(ctx, n.UUID); gerr == nil && other.ID != n.ID {
		return classed("NodeAlreadyExists", http.StatusConflict, err, "A node with UUID %s already exists.", n.UUID)
	}
	if n.Name != nil {
		if other, gerr := s.store.GetNode(ctx, *n.Name); gerr == nil && other.UUID != n.UUID {
			return classed("DuplicateName", http.StatusConflict, err, "A node with name %s already exists.", *n.Name)
		}
	}
	if n.InstanceUUID != nil {
		taken, gerr := s.db.Bun().NewSelect().Table(db.TableNodes).Where("instance_uuid = ?", *n.InstanceUUID).
			Where("uuid != ?", n.UUID).Exists(ctx)
		if gerr == nil && taken {
			return classed("InstanceAssociated", http.StatusConflict, err,
				"Instance %s is already associated with a node, it cannot be associated with this other node %s", *n.InstanceUUID, n.UUID)
		}
	}
	return classed("NodeAlreadyExists", http.StatusConflict, err, "A node with UUID %s already exists.", n.UUID)
}

// updateNode applies the fields the caller changed to the stored node under
// its lease and returns the stored node. Changing the driver or an
// interface re-checks the node's interfaces (checkInterfaceUpdate); fields
// the caller's object version lacks are never taken from it
// (senderChanges).
func (s *Service) updateNode(ctx context.Context, p rpc.Params) (any, error) {
	in, err := objectArg[*objects.Node](p, "node")
	if err != nil {
		return nil, err
	}
	reg := s.store.Registry()
	changed, err := reg.Changed(in)
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := p.Decode("node", &raw); err != nil {
		return nil, err
	}
	sent, err := objects.ParsePrimitive(raw)
	if err != nil {
		return nil, errInvalidParameter("argument node: %v", err)
	}
	if changed, err = senderChanges(reg, in, sent.Version, changed); err != nil {
		return nil, err
	}
	t, err := s.tasks.Acquire(ctx, in.UUID, "node update")
	if err != nil {
		return nil, err
	}
	return withLease(ctx, t, func() (any, error) {
		n := t.Node
		var applied []string
		for _, f := range changed {
			if slices.Contains(protectedNodeFields, f) {
				continue
			}
			v, err := reg.Get(in, f)
			if err != nil {
				return nil, err
			}
			if cur, err := reg.Get(n, f); err == nil && reflect.DeepEqual(v, cur) {
				continue // not a change: e.g. a field an older row's conversion marked
			}
			if err := reg.Set(n, f, v); err != nil {
				return nil, errInvalidParameter("node %s: field %s: %v", n.UUID, f, err)
			}
			applied = append(applied, f)
		}
		if err := s.unstorable("Node", n, applied); err != nil {
			return nil, err
		}
		n.ConductorGroup = strings.ToLower(n.ConductorGroup)
		if err := checkUpdatePolicy(n, applied); err != nil {
			return nil, err
		}
		if _, err := s.hardware(n); err != nil {
			return nil, err
		}
		if err := s.checkInterfaceUpdate(n, applied); err != nil {
			return nil, err
		}
		if err := s.instanceRemoved(ctx, t, applied); err != nil {
			return nil, err
		}
		if err := t.Save(ctx); err != nil {
			if db.IsUniqueViolation(err) {
				return nil, s.duplicateNode(ctx, n, err)
			}
			return nil, err
		}
		s.nodeLog(ctx, n).Info("node updated", "fields", changed)
		return n, nil
	})
}

// destroyNode deletes a node in a state that allows it (or in
// maintenance), with its ports and portgroups.
func (s *Service) destroyNode(ctx context.Context, p rpc.Params) (any, error) {
	t, err := s.acquireParam(ctx, p, "node deletion")
	if err != nil {
		return nil, err
	}
	defer t.Release(ctx)
	n := t.Node
	if n.Protected {
		return nil, errProtected(n)
	}
	st := states.State(n.ProvisionState)
	if !n.Maintenance && n.InstanceUUID != nil {
		return nil, classed("NodeAssociated", http.StatusConflict, nil, "Node %s is associated with instance %s.", n.UUID, *n.InstanceUUID)
	}
	if !states.DeleteAllowed[st] && !n.Maintenance {
		var valid []string
		for s := range states.DeleteAllowed {
			valid = append(valid, string(s))
		}
		slices.Sort(valid)
		return nil, errInvalidState("Can not delete node \"%s\" while it is in provision state \"%s\". Valid provision states to start deletion are: %s, in addition to any maintenance state.",
			n.UUID, st, strings.Join(valid, ", "))
	}
	if err := s.db.DestroyNodeFenced(ctx, n.ID, s.cfg.Hostname, t.epoch); err != nil {
		if errors.Is(err, db.ErrLeaseLost) {
			return nil, fmt.Errorf("conductor %s: destroy node %s: %w", s.cfg.Hostname, n.UUID, err)
		}
		return nil, err
	}
	s.nodeLog(ctx, n).Info("node destroyed")
	return nil, nil
}
