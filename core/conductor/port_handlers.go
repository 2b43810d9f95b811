package conductor

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/db"
)

var protectedChildFields = []string{"id", "uuid", "created_at", "updated_at"}

// nodeByID returns the UUID of the node with internal id.
func (s *Service) nodeByID(ctx context.Context, id int64) (string, error) {
	obj, err := s.store.Load(ctx, "Node", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("n.id = ?", id) })
	if errors.Is(err, db.ErrNotFound) {
		return "", classed("NodeNotFound", http.StatusNotFound, err, "Node %d could not be found.", id)
	}
	if err != nil {
		return "", err
	}
	return obj.(*objects.Node).UUID, nil
}

// normalizeMAC checks a MAC address and returns it lower case with colons
// (Ironic's InvalidMAC otherwise).
func normalizeMAC(mac string) (string, error) {
	hw, err := net.ParseMAC(mac)
	if err != nil || len(hw) != 6 {
		return "", errInvalidParameter("Expected a MAC address but received %s.", mac)
	}
	return strings.ToLower(hw.String()), nil
}

func macExists(mac string, err error) error {
	return classed("MACAlreadyExists", http.StatusConflict, err, "A port with MAC address %s already exists.", mac)
}

// createPort validates and stores a port under its node's lease.
func (s *Service) createPort(ctx context.Context, p rpc.Params) (any, error) {
	port, err := objectArg[*objects.Port](p, "port")
	if err != nil {
		return nil, err
	}
	if port.Address, err = normalizeMAC(port.Address); err != nil {
		return nil, err
	}
	set, err := s.store.Registry().Changed(port)
	if err != nil {
		return nil, err
	}
	if err := s.unstorable(port.Kind(), port, set); err != nil {
		return nil, err
	}
	nodeUUID, err := s.nodeByID(ctx, port.NodeID)
	if err != nil {
		return nil, err
	}
	t, err := s.tasks.Acquire(ctx, nodeUUID, "port create")
	if err != nil {
		return nil, err
	}
	return withLease(ctx, t, func() (any, error) {
		if port.UUID == "" {
			port.UUID = uuid.NewString()
		}
		if err := s.checkPortPhysnet(ctx, port, nil); err != nil {
			return nil, err
		}
		if err := s.store.Create(ctx, port); err != nil {
			if db.IsUniqueViolation(err) {
				return nil, macExists(port.Address, err)
			}
			return nil, err
		}
		s.log.Info("port created", "node", nodeUUID, "port", port.UUID, "request_id", rpc.RequestID(ctx))
		return port, nil
	})
}

// loadChild returns the stored child of a node (Port, Portgroup,
// VolumeConnector, VolumeTarget) with obj's UUID.
func (s *Service) loadChild(ctx context.Context, kind, uuid string) (objects.Object, error) {
	obj, err := s.store.Load(ctx, kind, func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.uuid = ?", uuid) })
	if errors.Is(err, db.ErrNotFound) {
		return nil, classed(kind+"NotFound", http.StatusNotFound, err, "%s %s could not be found.", kind, uuid)
	}
	return obj, err
}

// updateChild applies in's changed fields to the stored Port or Portgroup
// under the lease of the node it belongs to (after the change), and saves.
func (s *Service) updateChild(ctx context.Context, in objects.Object, uuid string) (any, error) {
	check := func(_ *objects.Node, cur objects.Object, changed []string) error {
		switch c := cur.(type) {
		case *objects.Port:
			return s.checkPortPhysnet(ctx, c, changed)
		case *objects.Portgroup:
			if slices.Contains(changed, "physical_network") {
				return s.propagatePhysnet(ctx, c)
			}
		}
		return nil
	}
	return s.updateChildChecked(ctx, in, uuid, check, func(cur objects.Object, err error) error {
		if port, ok := cur.(*objects.Port); ok {
			return macExists(port.Address, err)
		}
		return classed("PortgroupDuplicateName", http.StatusConflict, err, "A portgroup with that name or address already exists.")
	})
}

// updateChildChecked is updateChild for any child of a node (a port,
// portgroup, volume connector or target): check, when set, may refuse
// (or do more) under the lease before the save; dup words a unique
// violation.
func (s *Service) updateChildChecked(ctx context.Context, in objects.Object, uuid string,
	check func(n *objects.Node, cur objects.Object, changed []string) error, dup func(cur objects.Object, err error) error) (any, error) {
	reg := s.store.Registry()
	changed, err := reg.Changed(in)
	if err != nil {
		return nil, err
	}
	cur, err := s.loadChild(ctx, in.Kind(), uuid)
	if err != nil {
		return nil, err
	}
	for _, f := range changed {
		if slices.Contains(protectedChildFields, f) {
			continue
		}
		v, err := reg.Get(in, f)
		if err == nil {
			err = reg.Set(cur, f, v)
		}
		if err != nil {
			return nil, errInvalidParameter("%s %s: field %s: %v", in.Kind(), uuid, f, err)
		}
	}
	if err := s.unstorable(in.Kind(), cur, changed); err != nil {
		return nil, err
	}
	if port, ok := cur.(*objects.Port); ok {
		if port.Address, err = normalizeMAC(port.Address); err != nil {
			return nil, err
		}
	}
	nodeID, _ := reg.Get(cur, "node_id")
	nodeUUID, err := s.nodeByID(ctx, nodeID.(int64))
	if err != nil {
		return nil, err
	}
	t, err := s.tasks.Acquire(ctx, nodeUUID, strings.ToLower(in.Kind())+" update")
	if err != nil {
		return nil, err
	}
	return withLease(ctx, t, func() (any, error) {
		if check != nil {
			if err := check(t.Node, cur, changed); err != nil {
				return nil, err
			}
		}
		if err := s.store.Save(ctx, cur); err != nil {
			if db.IsUniqueViolation(err) {
				return nil, dup(cur, err)
			}
			return nil, err
		}
		s.log.Info(strings.ToLower(in.Kind())+" updated", "node", nodeUUID, "uuid", uuid, "fields", changed)
		return cur, nil
	})
}

// destroyChild deletes a Port or Portgroup under its node's lease; check
// may refuse first.
func (s *Service) destroyChild(ctx context.Context, kind, uuid string, check func(n *objects.Node, cur objects.Object) error) (any, error) {
	cur, err := s.loadChild(ctx, kind, uuid)
	if err != nil {
		return nil, err
	}
	nodeID, _ := s.store.Registry().Get(cur, "node_id")
	nodeUUID, err := s.nodeByID(ctx, nodeID.(int64))
	if err != nil {
		return nil, err
	}
	t, err := s.tasks.Acquire(ctx, nodeUUID, strings.ToLower(kind)+" delete")
	if err != nil {
		return nil, err
	}
	return withLease(ctx, t, func() (any, error) {
		if check != nil {
			if err := check(t.Node, cur); err != nil {
				return nil, err
			}
		}
		if err := s.store.Delete(ctx, cur); err != nil {
			return nil, err
		}
		s.log.Info(strings.ToLower(kind)+" destroyed", "node", nodeUUID, "uuid", uuid)
		return nil, nil
	})
}

func (s *Service) updatePort(ctx context.Context, p rpc.Params) (any, error) {
	port, err := objectArg[*objects.Port](p, "port")
	if err != nil {
		return nil, err
	}
	return s.updateChild(ctx, port, port.UUID)
}

func (s *Service) destroyPort(ctx context.Context, p rpc.Params) (any, error) {
	port, err := objectArg[*objects.Port](p, "port")
	if err != nil {
		return nil, err
	}
	// Ironic's destroy_port: a port bound to a VIF stays unless the node is
	// in maintenance.
	return s.destroyChild(ctx, "Port", port.UUID, func(n *objects.Node, cur objects.Object) error {
		if vif := boundVIF(cur.(*objects.Port)); vif != "" && !n.Maintenance {
			return errInvalidState("Cannot delete the port %s as it is bound to VIF %s for use.", port.UUID, vif)
		}
		return nil
	})
}

func (s *Service) updatePortgroup(ctx context.Context, p rpc.Params) (any, error) {
	pg, err := objectArg[*objects.Portgroup](p, "portgroup")
	if err != nil {
		return nil, err
	}
	return s.updateChild(ctx, pg, pg.UUID)
}

// destroyPortgroup refuses a portgroup that still has ports (Ironic's
// PortgroupNotEmpty).
func (s *Service) destroyPortgroup(ctx context.Context, p rpc.Params) (any, error) {
	pg, err := objectArg[*objects.Portgroup](p, "portgroup")
	if err != nil {
		return nil, err
	}
	return s.destroyChild(ctx, "Portgroup", pg.UUID, func(_ *objects.Node, cur objects.Object) error {
		ports, err := s.store.LoadAll(ctx, "Port", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("?TableAlias.portgroup_id = ?", cur.(*objects.Portgroup).ID).Limit(1)
		})
		if err != nil {
			return err
		}
		if len(ports) > 0 {
			return classed("PortgroupNotEmpty", http.StatusBadRequest, nil,
				"Cannot complete the requested action because portgroup %s contains ports.", pg.UUID)
		}
		return nil
	})
}
