package rpc

import (
	"context"

	"github.com/rivetmetal/rivet/core/objects"
)

// AddNodeTraits adds traits to the node under its lease, or with replace
// makes them the node's only traits (RPC 1.5, Ironic's add_node_traits).
// More than objects.MaxTraitsPerNode traits is InvalidParameterValue (400)
// and changes nothing. Capped below 1.5, *CapError before anything is
// sent (the REST API answers 406).
func (c ConductorAPI) AddNodeTraits(ctx context.Context, n *objects.Node, traits []string, replace bool) error {
	if traits == nil {
		traits = []string{}
	}
	_, err := c.call(ctx, n, "add_node_traits", map[string]any{"node_id": n.UUID, "traits": traits, "replace": replace})
	return err
}

// RemoveNodeTraits removes traits from the node under its lease, or every
// trait when traits is nil (RPC 1.5, Ironic's remove_node_traits). A trait
// the node lacks is NodeTraitNotFound (404) and nothing is removed.
// Capped below 1.5, *CapError before anything is sent.
func (c ConductorAPI) RemoveNodeTraits(ctx context.Context, n *objects.Node, traits []string) error {
	args := map[string]any{"node_id": n.UUID}
	if traits != nil {
		args["traits"] = traits
	}
	_, err := c.call(ctx, n, "remove_node_traits", args)
	return err
}
