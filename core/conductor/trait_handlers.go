package conductor

import (
	"context"
	"errors"
	"net/http"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/db"
)

// addNodeTraits serves add_node_traits (RPC 1.5): under the node's lease,
// adds the traits, or with replace makes them the node's only traits, in
// one transaction. The REST API validated the names.
func (s *Service) addNodeTraits(ctx context.Context, p rpc.Params) (any, error) {
	var traits []string
	var replace bool
	if err := p.Decode("traits", &traits); err != nil {
		return nil, err
	}
	if err := p.Decode("replace", &replace); err != nil {
		return nil, err
	}
	t, err := s.acquireParam(ctx, p, "add node traits")
	if err != nil {
		return nil, err
	}
	return withLease(ctx, t, func() (any, error) {
		if replace {
			err = s.store.SetNodeTraits(ctx, t.Node.ID, traits)
		} else {
			err = s.store.AddNodeTraits(ctx, t.Node.ID, traits)
		}
		return nil, traitsError(t.Node, err)
	})
}

// removeNodeTraits serves remove_node_traits (RPC 1.5): under the node's
// lease, removes the traits, or every trait when none is given.
func (s *Service) removeNodeTraits(ctx context.Context, p rpc.Params) (any, error) {
	var traits []string
	if p.Has("traits") {
		if err := p.Decode("traits", &traits); err != nil {
			return nil, err
		}
		if traits == nil {
			traits = []string{}
		}
	}
	t, err := s.acquireParam(ctx, p, "remove node traits")
	if err != nil {
		return nil, err
	}
	return withLease(ctx, t, func() (any, error) {
		if traits != nil && len(traits) == 0 {
			return nil, nil
		}
		return nil, traitsError(t.Node, s.store.RemoveNodeTraits(ctx, t.Node.ID, traits))
	})
}

// traitsError gives the db's trait errors Ironic's classes, naming the
// node by UUID (Ironic's maximum message names its internal id).
func traitsError(n *objects.Node, err error) error {
	var missing *db.TraitNotFoundError
	var tooMany *db.TooManyTraitsError
	switch {
	case errors.As(err, &missing):
		return classed("NodeTraitNotFound", http.StatusNotFound, err, "Node %s doesn't have a trait '%s'", n.UUID, missing.Trait)
	case errors.As(err, &tooMany):
		return classed("InvalidParameterValue", http.StatusBadRequest, err,
			"Could not modify traits for node %s as it would exceed the maximum number of traits per node (%d vs. %d)",
			n.UUID, tooMany.Count, objects.MaxTraitsPerNode)
	}
	return err
}
