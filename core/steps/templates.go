package steps

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/objects"
)

// Source is what template matching reads: db.Store implements it.
type Source interface {
	// NodeTraits returns the traits of the node with ID nodeID.
	NodeTraits(ctx context.Context, nodeID int64) ([]string, error)
	// DeployTemplatesByName returns the deploy templates whose name is one
	// of names, in name order.
	DeployTemplatesByName(ctx context.Context, names []string) ([]*objects.DeployTemplate, error)
}

// InstanceTraits returns the traits a deploy of n asked for,
// instance_info.traits (Nova sets them from the flavor and image): nil
// when there are none, *InvalidError when they are not a list of strings.
func InstanceTraits(n *objects.Node) ([]string, error) {
	raw, ok := n.InstanceInfo["traits"]
	if !ok || raw == nil {
		return nil, nil
	}
	invalid := &InvalidError{Msg: fmt.Sprintf("Error parsing traits from Node %s instance_info field. A list of strings is expected.", n.UUID)}
	list, ok := raw.([]any)
	if !ok {
		if strs, isStrs := raw.([]string); isStrs {
			return strs, nil
		}
		if s, isString := raw.(string); isString && s == "" {
			return nil, nil // empty: Ironic's "not instance_info.get('traits')"
		}
		return nil, invalid
	}
	out := make([]string, 0, len(list))
	for _, t := range list {
		s, ok := t.(string)
		if !ok {
			return nil, invalid
		}
		out = append(out, s)
	}
	return out, nil
}

// ValidateInstanceTraits is Ironic's validate_instance_info_traits: every
// instance trait must be one of the node's traits. Deploy validation and
// the deploy interface's validate call it; *InvalidError otherwise.
func ValidateInstanceTraits(n *objects.Node, instance, nodeTraits []string) error {
	var missing []string
	for _, t := range instance {
		if !slices.Contains(nodeTraits, t) && !slices.Contains(missing, t) {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &InvalidError{Msg: fmt.Sprintf("Cannot specify instance traits that are not also set on the node. "+
		"Node %s is missing traits %s", n.UUID, strings.Join(missing, ", "))}
}

// Matched is the outcome of TemplateSteps.
type Matched struct {
	// Templates are the names of the matching templates, in name order.
	Templates []string
	// Steps are the templates' steps, template by template, each in the
	// template's order; steps with priority 0 are included (they disable
	// a driver step of the same interface and name).
	Steps []Step
}

// TemplateSteps returns the deploy steps a deploy of n takes from deploy
// templates, as Ironic's conductor does at deploy time: the instance
// traits (instance_info.traits) are checked against the node's traits
// (ValidateInstanceTraits), and every deploy template whose name is one of
// them contributes its steps. A node without instance traits matches
// nothing. The deploy-steps engine merges these with the driver's steps
// (user steps first, then template steps, then enabled driver steps not
// overridden, sorted by Sort).
func TemplateSteps(ctx context.Context, src Source, n *objects.Node) (Matched, error) {
	instance, err := InstanceTraits(n)
	if err != nil || len(instance) == 0 {
		return Matched{}, err
	}
	nodeTraits, err := src.NodeTraits(ctx, n.ID)
	if err != nil {
		return Matched{}, err
	}
	if err := ValidateInstanceTraits(n, instance, nodeTraits); err != nil {
		return Matched{}, err
	}
	templates, err := src.DeployTemplatesByName(ctx, instance)
	if err != nil {
		return Matched{}, err
	}
	var m Matched
	for _, t := range templates {
		m.Templates = append(m.Templates, t.Name)
		for _, raw := range t.Steps {
			st, err := FromMap(raw)
			if err != nil {
				return Matched{}, fmt.Errorf("deploy template %s: %w", t.Name, err)
			}
			m.Steps = append(m.Steps, st)
		}
	}
	return m, nil
}

// Sort orders deploy steps as Ironic runs them: higher priority first,
// ties by the interface's tie-break priority (DeployInterfaces), stable
// otherwise.
func Sort(steps []Step) {
	slices.SortStableFunc(steps, func(a, b Step) int {
		if a.Priority != b.Priority {
			return b.Priority - a.Priority
		}
		return InterfacePriority(DeployInterfaces, b.Interface) - InterfacePriority(DeployInterfaces, a.Interface)
	})
}
