package rpc

import (
	"context"

	"github.com/rivetmetal/rivet/core/objects"
)

// UpdateVolumeConnector saves a volume connector's changes under its
// node's lease; the node must be powered off (InvalidStateRequested, 400),
// and a connector of the same type and ID elsewhere is
// VolumeConnectorTypeAndIdAlreadyExists (409). RPC 1.5: capped below, the
// call fails with *CapError before anything is sent.
func (c ConductorAPI) UpdateVolumeConnector(ctx context.Context, n *objects.Node, vc *objects.VolumeConnector) (*objects.VolumeConnector, error) {
	return objectReply[*objects.VolumeConnector](c.call(ctx, n, "update_volume_connector", map[string]any{"connector": vc}))
}

// DestroyVolumeConnector deletes a volume connector under its node's
// lease; the node must be powered off or in a state that allows deleting
// it (enroll, manageable, adopt failed). RPC 1.5.
func (c ConductorAPI) DestroyVolumeConnector(ctx context.Context, n *objects.Node, vc *objects.VolumeConnector) error {
	_, err := c.call(ctx, n, "destroy_volume_connector", map[string]any{"connector": vc})
	return err
}

// UpdateVolumeTarget saves a volume target's changes under its node's
// lease; the node must be powered off, and a boot index already used on
// the node is VolumeTargetBootIndexAlreadyExists (409). RPC 1.5.
func (c ConductorAPI) UpdateVolumeTarget(ctx context.Context, n *objects.Node, vt *objects.VolumeTarget) (*objects.VolumeTarget, error) {
	return objectReply[*objects.VolumeTarget](c.call(ctx, n, "update_volume_target", map[string]any{"target": vt}))
}

// DestroyVolumeTarget deletes a volume target under its node's lease, in
// the node states DestroyVolumeConnector allows. RPC 1.5.
func (c ConductorAPI) DestroyVolumeTarget(ctx context.Context, n *objects.Node, vt *objects.VolumeTarget) error {
	_, err := c.call(ctx, n, "destroy_volume_target", map[string]any{"target": vt})
	return err
}
