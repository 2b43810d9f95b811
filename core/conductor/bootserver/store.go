package bootserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/db"
	"github.com/uptrace/bun"
)

// StoreSource is the Source the conductor serves from: plain reads of the
// shared database, no lease.
type StoreSource struct {
	// Store is the conductor's object store.
	Store *db.Store
	// InspectionCallback is [inspector] callback_endpoint_override, passed
	// to the agent ramdisk a node being inspected boots (AgentRamdisk).
	InspectionCallback string
}

// NodeByUUID implements Source.
func (s StoreSource) NodeByUUID(ctx context.Context, uuid string) (Node, error) {
	return s.node(ctx, "uuid", uuid)
}

// NodeByMAC implements Source.
func (s StoreSource) NodeByMAC(ctx context.Context, mac string) (Node, error) {
	obj, err := s.Store.Load(ctx, "Port", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.address = ?", mac)
	})
	if err != nil {
		return Node{}, notFound("port "+mac, err)
	}
	return s.node(ctx, "id", obj.(*objects.Port).NodeID)
}

func (s StoreSource) node(ctx context.Context, col string, v any) (Node, error) {
	obj, err := s.Store.Load(ctx, "Node", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.? = ?", bun.Ident(col), v)
	})
	if err != nil {
		return Node{}, notFound(fmt.Sprintf("node %s %v", col, v), err)
	}
	n := obj.(*objects.Node)
	ii := n.InstanceInfo
	if agentStates[n.ProvisionState] {
		ii = AgentRamdisk(n.DriverInfo, s.InspectionCallback)
	}
	return Node{UUID: n.UUID, ProvisionState: n.ProvisionState, InstanceInfo: ii}, nil
}

func notFound(what string, err error) error {
	if errors.Is(err, db.ErrNotFound) {
		return fmt.Errorf("%w: %s", ErrNotFound, what)
	}
	return fmt.Errorf("bootserver: load %s: %w", what, err)
}
