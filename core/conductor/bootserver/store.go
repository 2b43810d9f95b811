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
	if agentStates[n.ProvisionState] { // inspecting: the agent ramdisk
		return Node{UUID: n.UUID, ProvisionState: n.ProvisionState,
			InstanceInfo: AgentRamdisk(n.DriverInfo, s.InspectionCallback)}, nil
	}
	if n.RescueInterface != nil && *n.RescueInterface == "agent" && rescueAgentStates[n.ProvisionState] {
		return agentNode(n, "rescue_kernel", "rescue_ramdisk"), nil
	}
	if n.DeployInterface != nil && *n.DeployInterface == "direct" {
		if !deployAgentStates[n.ProvisionState] {
			return Node{UUID: n.UUID, ProvisionState: "available", InstanceInfo: map[string]any{}}, nil
		}
		return agentNode(n, InfoDeployKernel, InfoDeployRamdisk), nil
	}
	return Node{UUID: n.UUID, ProvisionState: n.ProvisionState, InstanceInfo: n.InstanceInfo}, nil
}

// deployAgentStates are the provision states in which a direct-deploy
// node boots the ironic-python-agent; in any other it boots its disk.
var deployAgentStates = map[string]bool{"deploying": true, "wait call-back": true, "cleaning": true, "clean wait": true}

// rescueAgentStates are the provision states in which a node of the agent
// rescue interface boots the rescue ramdisk (driver_info rescue_kernel and
// rescue_ramdisk): from rescuing until unrescue, as Ironic keeps the
// rescue boot configuration in place until unrescue.
var rescueAgentStates = map[string]bool{"rescuing": true, "rescue wait": true, "rescue": true}

// agentNode is a node as scripts see it while the agent runs on it: the
// agent kernel and ramdisk driver_info names under kernelKey and
// ramdiskKey (with kernel_append_params, as Ironic names them), under a
// state that boots. Outside those states a direct-deploy node boots its
// local disk (its instance is on the disk).
func agentNode(n *objects.Node, kernelKey, ramdiskKey string) Node {
	ii := map[string]any{KeyKernel: n.DriverInfo[kernelKey], KeyRamdisk: n.DriverInfo[ramdiskKey]}
	if p, ok := n.DriverInfo["kernel_append_params"]; ok {
		ii[KeyKernelAppendParams] = p
	}
	if m, ok := n.InstanceInfo[KeyBootMode]; ok {
		ii[KeyBootMode] = m
	}
	return Node{UUID: n.UUID, ProvisionState: "deploying", InstanceInfo: ii}
}

func notFound(what string, err error) error {
	if errors.Is(err, db.ErrNotFound) {
		return fmt.Errorf("%w: %s", ErrNotFound, what)
	}
	return fmt.Errorf("bootserver: load %s: %w", what, err)
}
