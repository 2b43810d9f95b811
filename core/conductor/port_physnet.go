package conductor

import (
	"context"
	"net/http"
	"slices"

	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/core/objects"
)

// orNone shows a physical network as Ironic's messages do.
func orNone(s *string) string {
	if s == nil {
		return "None"
	}
	return *s
}

// checkPortPhysnet is Ironic's validate_port_physnet: a port joining a
// portgroup, or changing its physical network inside one, must be on the
// physical network of the portgroup's other ports (or, when it has none,
// the portgroup's own, REST API 1.102); otherwise Conflict (409).
// changed lists the port's changed fields (nil: a new port).
func (s *Service) checkPortPhysnet(ctx context.Context, p *objects.Port, changed []string) error {
	if p.PortgroupID == nil {
		return nil
	}
	if changed != nil && !slices.Contains(changed, "portgroup_id") && !slices.Contains(changed, "physical_network") {
		return nil
	}
	others, err := s.store.LoadAll(ctx, "Port", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.portgroup_id = ?", *p.PortgroupID).Where("?TableAlias.uuid != ?", p.UUID)
	})
	if err != nil {
		return err
	}
	pg, err := s.loadPortgroupByID(ctx, *p.PortgroupID)
	if err != nil {
		return err
	}
	var want *string
	switch {
	case len(others) > 0:
		want = others[0].(*objects.Port).PhysicalNetwork
	case pg.PhysicalNetwork != nil:
		want = pg.PhysicalNetwork
	default:
		return nil
	}
	if orNone(want) != orNone(p.PhysicalNetwork) || (want == nil) != (p.PhysicalNetwork == nil) {
		return classed("Conflict", http.StatusConflict, nil,
			"Port with physical network %s cannot become a member of port group %s which has ports in physical network %s.",
			orNone(p.PhysicalNetwork), pg.UUID, orNone(want))
	}
	return nil
}

func (s *Service) loadPortgroupByID(ctx context.Context, id int64) (*objects.Portgroup, error) {
	obj, err := s.store.Load(ctx, "Portgroup", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.id = ?", id) })
	if err != nil {
		return nil, err
	}
	return obj.(*objects.Portgroup), nil
}

// propagatePhysnet sets a portgroup's physical network on its member
// ports, as Ironic's update_portgroup_physical_network does after a
// portgroup's physical_network changed (under the node's lease).
func (s *Service) propagatePhysnet(ctx context.Context, pg *objects.Portgroup) error {
	ports, err := s.store.LoadAll(ctx, "Port", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.portgroup_id = ?", pg.ID)
	})
	if err != nil {
		return err
	}
	for _, o := range ports {
		p := o.(*objects.Port)
		p.PhysicalNetwork = pg.PhysicalNetwork
		if err := s.store.Save(ctx, p); err != nil {
			return err
		}
	}
	return nil
}
