package conductor

import (
	"context"
	"errors"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/steps"
)

// validateInstanceTraits is the deploy interface's part of Ironic's
// validate_instance_info_traits: instance_info.traits must be a list of
// strings, each one of the node's traits (API 1.37), since deploy
// templates are matched against them (steps.TemplateSteps). It runs in
// GET …/validate and before a deploy starts.
func (s *Service) validateInstanceTraits(ctx context.Context, n *objects.Node) rpc.InterfaceValidation {
	instance, err := steps.InstanceTraits(n)
	if err == nil && len(instance) > 0 {
		var nodeTraits []string
		if nodeTraits, err = s.store.NodeTraits(ctx, n.ID); err == nil {
			err = steps.ValidateInstanceTraits(n, instance, nodeTraits)
		}
	}
	var invalid *steps.InvalidError
	switch {
	case err == nil:
		return ok()
	case errors.As(err, &invalid):
		return notOK("%s", invalid.Msg)
	}
	s.nodeLog(ctx, n).Error("reading the node's traits failed", "error", err)
	return notOK("the node's traits could not be read; retry")
}
