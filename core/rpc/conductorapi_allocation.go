package rpc

import (
	"context"

	"github.com/rivetmetal/rivet/core/objects"
)

// CreateAllocation stores a new allocation and answers it (RPC 1.5,
// Ironic's create_allocation). Without node it goes to a conductor picked
// at random, which then looks for a node in the background (the answer is
// "allocating"; clients poll). With node (a backfill, the allocation's
// NodeID set to node's id) it goes to the node's conductor, which gives it
// the node synchronously or refuses: AllocationFailed (400) when the node
// does not match, NodeAssociated (409) when it has another instance.
// Capped below 1.5: *CapError before anything is sent.
func (c ConductorAPI) CreateAllocation(ctx context.Context, a *objects.Allocation, node *objects.Node) (*objects.Allocation, error) {
	args := map[string]any{"allocation": a}
	if node != nil {
		return objectReply[*objects.Allocation](c.call(ctx, node, "create_allocation", args))
	}
	return objectReply[*objects.Allocation](c.Client.CallAny(ctx, c.Router, "create_allocation", args))
}

// DestroyAllocation deletes an allocation and frees its node (RPC 1.5):
// under the node's lease, InvalidState (409) while the node is active or
// between states and not in maintenance; AllocationNotFound (404) when it
// is gone. node is the allocation's node, nil if none. Capped below 1.5:
// *CapError before anything is sent.
func (c ConductorAPI) DestroyAllocation(ctx context.Context, a *objects.Allocation, node *objects.Node) error {
	args := map[string]any{"allocation": a}
	var err error
	if node != nil {
		_, err = c.call(ctx, node, "destroy_allocation", args)
	} else {
		_, err = c.Client.CallAny(ctx, c.Router, "destroy_allocation", args)
	}
	return err
}
