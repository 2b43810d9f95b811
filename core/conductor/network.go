package conductor

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
)

// Rivet's one network interface is catalog.NoopNetwork: it configures no
// switch and no Neutron. Unlike Ironic's noop, which forgets VIFs, it
// records which VIF is attached to which port or portgroup in their
// internal_info, as Ironic's flat and neutron interfaces do, so a
// standalone deployment can use the VIF API (1.28) and see its attachments
// in the port API.
const (
	// tenantVIFKey is the internal_info key holding a port's (or
	// portgroup's) tenant VIF, Ironic's tenant_vif_port_id.
	tenantVIFKey = "tenant_vif_port_id"
	// legacyVIFKey is the extra key older Ironic clients wrote; detach
	// clears it as Ironic does.
	legacyVIFKey = "vif_port_id"
)

// checkNetworkInterface accepts a node whose network interface (named, or
// its hardware type's default) this conductor enables; anything else is
// the catalog's error, Ironic's InterfaceNotFoundInEntrypoint (400).
func (s *Service) checkNetworkInterface(n *objects.Node) error {
	_, err := s.nodeInterface(n, catalog.Network)
	return err
}

// portLike is a port or a portgroup as VIF attachment sees it.
type portLike struct {
	obj   objects.Object // *objects.Port or *objects.Portgroup
	uuid  string
	group bool
	pxe   bool // a portgroup counts as PXE-enabled, as in Ironic's ordering
	info  *map[string]any
	extra *map[string]any
}

// vif returns the tenant VIF attached to p, or "".
func (p portLike) vif() string {
	s, _ := (*p.info)[tenantVIFKey].(string)
	return s
}

func (p portLike) kind() string { return p.obj.Kind() }

// nodePorts is a node's ports and portgroups, each in creation order.
type nodePorts struct {
	ports  []portLike
	groups []portLike
	// groupOf maps a port's UUID to its portgroup's ID, for grouped ports.
	groupOf map[string]int64
	groupID map[string]int64 // portgroup UUID → ID
}

// loadNodePorts reads n's ports and portgroups.
func (s *Service) loadNodePorts(ctx context.Context, n *objects.Node) (*nodePorts, error) {
	byNode := func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.node_id = ?", n.ID).OrderExpr("?TableAlias.id ASC")
	}
	ports, err := s.store.LoadAll(ctx, "Port", byNode)
	if err != nil {
		return nil, err
	}
	groups, err := s.store.LoadAll(ctx, "Portgroup", byNode)
	if err != nil {
		return nil, err
	}
	np := &nodePorts{groupOf: map[string]int64{}, groupID: map[string]int64{}}
	for _, o := range ports {
		p := o.(*objects.Port)
		np.ports = append(np.ports, portLike{obj: p, uuid: p.UUID, pxe: p.PXEEnabled, info: &p.InternalInfo, extra: &p.Extra})
		if p.PortgroupID != nil {
			np.groupOf[p.UUID] = *p.PortgroupID
		}
	}
	for _, o := range groups {
		pg := o.(*objects.Portgroup)
		np.groups = append(np.groups, portLike{obj: pg, uuid: pg.UUID, group: true, pxe: true, info: &pg.InternalInfo, extra: &pg.Extra})
		np.groupID[pg.UUID] = pg.ID
	}
	return np, nil
}

// vifs lists the attached VIFs, ports first, as Ironic's vif_list.
func (np *nodePorts) vifs() []rpc.VIF {
	out := []rpc.VIF{}
	for _, p := range slices.Concat(np.ports, np.groups) {
		if id := p.vif(); id != "" {
			out = append(out, rpc.VIF{ID: id})
		}
	}
	return out
}

// freeFor picks where vifID goes, by Ironic's rules: the VIF must not be
// attached yet (VifAlreadyAttached, 409); a portgroup with ports and none
// of them attached is a candidate, and so is a port without a portgroup
// or one in a portgroup whose ports carry VIFs already; portgroups come
// before ports and PXE-enabled ports before the others, each in creation
// order. No candidate is NoFreePhysicalPorts (400).
//
// want narrows the choice as vif_info's port_uuid or portgroup_uuid do in
// Ironic (REST API 1.67): only that port (a port outside any portgroup),
// or only that portgroup (or, once its ports carry VIFs, none).
func (np *nodePorts) freeFor(vifID string, want vifWant) (portLike, error) {
	for _, p := range slices.Concat(np.ports, np.groups) {
		if p.vif() == vifID {
			return portLike{}, classed("VifAlreadyAttached", http.StatusConflict, nil,
				"Unable to attach VIF because VIF %s is already attached to Ironic %s %s", vifID, p.kind(), p.uuid)
		}
	}
	var free []portLike
	loose := map[int64][]portLike{} // free ports by portgroup ID
	busyGroup := map[int64]bool{}   // portgroups with a port carrying a VIF
	for _, p := range np.ports {
		if want.port != "" && p.uuid != want.port {
			continue
		}
		gid, grouped := np.groupOf[p.uuid]
		switch {
		case !grouped && want.group != "":
		case p.vif() != "":
			if grouped {
				busyGroup[gid] = true
			}
		case grouped:
			loose[gid] = append(loose[gid], p)
		default:
			free = append(free, p)
		}
	}
	for _, g := range np.groups {
		if want.port != "" || (want.group != "" && g.uuid != want.group) {
			continue
		}
		id := np.groupID[g.uuid]
		switch {
		case g.vif() != "":
		case busyGroup[id] && want.group != "":
		case busyGroup[id]:
			free = append(free, loose[id]...) // use its ports one by one instead
		case len(loose[id]) > 0:
			free = append(free, g)
		}
	}
	if len(free) == 0 {
		return portLike{}, classed("NoFreePhysicalPorts", http.StatusBadRequest, nil,
			"Unable to attach VIF %s, not enough free physical ports.", vifID)
	}
	slices.SortStableFunc(free, func(a, b portLike) int {
		rank := func(p portLike) int {
			r := 0
			if p.group {
				r += 2
			}
			if p.pxe {
				r++
			}
			return r
		}
		return rank(b) - rank(a)
	})
	return free[0], nil
}

// vifWant is the port or portgroup a VIF attachment asks for, by UUID.
type vifWant struct{ port, group string }

// vifWantOf reads vif_info's port_uuid, or else its portgroup_uuid.
func vifWantOf(info map[string]any) vifWant {
	if p, _ := info["port_uuid"].(string); p != "" {
		return vifWant{port: p}
	}
	g, _ := info["portgroup_uuid"].(string)
	return vifWant{group: g}
}

// attached returns the portgroup or port vifID is attached to, portgroups
// first as Ironic looks them up; VifNotAttached (400) otherwise.
func (np *nodePorts) attached(vifID, node string) (portLike, error) {
	for _, p := range slices.Concat(np.groups, np.ports) {
		if p.vif() == vifID {
			return p, nil
		}
	}
	return portLike{}, classed("VifNotAttached", http.StatusBadRequest, nil,
		"Unable to detach VIF %s from node %s because it is not attached to it.", vifID, node)
}

// vifNode loads the node named by node_id without a lease and checks its
// network interface.
func (s *Service) vifNode(ctx context.Context, p rpc.Params) (*objects.Node, error) {
	n, err := s.sharedByParam(ctx, p)
	if err != nil {
		return nil, err
	}
	return n, s.checkNetworkInterface(n)
}

// vifList lists a node's VIFs; a read takes no lease (RPC 1.2).
func (s *Service) vifList(ctx context.Context, p rpc.Params) (any, error) {
	n, err := s.vifNode(ctx, p)
	if err != nil {
		return nil, err
	}
	np, err := s.loadNodePorts(ctx, n)
	if err != nil {
		return nil, err
	}
	return np.vifs(), nil
}

// vifAttach records vif_info["id"] on a free port or portgroup of the node
// under its lease (RPC 1.2).
func (s *Service) vifAttach(ctx context.Context, p rpc.Params) (any, error) {
	var info map[string]any
	if err := p.Decode("vif_info", &info); err != nil {
		return nil, err
	}
	vifID, _ := info["id"].(string)
	if vifID == "" {
		return nil, errInvalidParameter("vif_info must carry the VIF's id as a string, got %v", info["id"])
	}
	return s.underNetworkLease(ctx, p, "attach vif", func(t *Task, np *nodePorts) error {
		target, err := np.freeFor(vifID, vifWantOf(info))
		if err != nil {
			return err
		}
		internal := maps.Clone(*target.info)
		if internal == nil {
			internal = map[string]any{}
		}
		internal[tenantVIFKey] = vifID
		*target.info = internal
		if err := s.store.Save(ctx, target.obj); err != nil {
			return fmt.Errorf("node %s: record VIF %s on %s %s: %w", t.Node.UUID, vifID, target.kind(), target.uuid, err)
		}
		s.nodeLog(ctx, t.Node).Info("VIF attached", "vif", vifID, strings.ToLower(target.kind()), target.uuid)
		return nil
	})
}

// vifDetach removes a VIF from the port or portgroup holding it, under the
// node's lease (RPC 1.2).
func (s *Service) vifDetach(ctx context.Context, p rpc.Params) (any, error) {
	vifID, err := p.String("vif_id")
	if err != nil {
		return nil, err
	}
	return s.underNetworkLease(ctx, p, "detach vif", func(t *Task, np *nodePorts) error {
		target, err := np.attached(vifID, t.Node.UUID)
		if err != nil {
			return err
		}
		internal, extra := maps.Clone(*target.info), maps.Clone(*target.extra)
		delete(internal, tenantVIFKey)
		if _, legacy := extra[legacyVIFKey]; legacy {
			delete(extra, legacyVIFKey)
			*target.extra = extra
		}
		*target.info = internal
		if err := s.store.Save(ctx, target.obj); err != nil {
			return fmt.Errorf("node %s: clear VIF %s from %s %s: %w", t.Node.UUID, vifID, target.kind(), target.uuid, err)
		}
		s.nodeLog(ctx, t.Node).Info("VIF detached", "vif", vifID, strings.ToLower(target.kind()), target.uuid)
		return nil
	})
}

// underNetworkLease runs fn with the node's lease held, its network
// interface checked and its ports and portgroups loaded under the lease.
func (s *Service) underNetworkLease(ctx context.Context, p rpc.Params, purpose string, fn func(t *Task, np *nodePorts) error) (any, error) {
	t, err := s.acquireParam(ctx, p, purpose)
	if err != nil {
		return nil, err
	}
	return withLease(ctx, t, func() (any, error) {
		if err := s.checkNetworkInterface(t.Node); err != nil {
			return nil, err
		}
		np, err := s.loadNodePorts(ctx, t.Node)
		if err != nil {
			return nil, err
		}
		return nil, fn(t, np)
	})
}

// boundVIF returns the VIF a port is bound to, for destroy_port's check.
func boundVIF(p *objects.Port) string {
	s, _ := p.InternalInfo[tenantVIFKey].(string)
	return s
}
