package api

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/uptrace/bun"
)

// nodeFields are the node's API fields (reference §11.1), in Ironic's
// order. traits (1.37) is not a Node object field: views get it from
// addNodeTraits, for every node of a list in one query.
// nodeFields are the node's API fields (1.31, then owner 1.50, lessee 1.65) (reference §11.1), in
// Ironic's order.
var nodeFields = []string{
	"uuid", "created_at", "updated_at", "chassis_uuid", "console_enabled", "driver", "driver_info", "extra",
	"instance_info", "instance_uuid", "last_error", "maintenance", "maintenance_reason", "power_state",
	"properties", "provision_state", "provision_updated_at", "reservation", "target_power_state",
	"target_provision_state", "links", "ports",
	"driver_internal_info", "name", "inspection_started_at", "inspection_finished_at", "clean_step",
	"raid_config", "target_raid_config", "states", "network_interface", "resource_class", "portgroups",
	"boot_interface", "console_interface", "deploy_interface", "inspect_interface", "management_interface",
	"power_interface", "raid_interface", "vendor_interface", "volume", "traits", "allocation_uuid", "owner", "lessee",
}

// nodeSince is THE node gating table: the microversion each node field
// newer than 1.1 appeared in. Responses hide newer fields; POST and PATCH
// setting them are 406.
var nodeSince = gated{
	"driver_internal_info": v1_3, "name": v1_5,
	"inspection_started_at": v1_6, "inspection_finished_at": v1_6,
	"clean_step": v1_7, "raid_config": v1_12, "target_raid_config": v1_12,
	"states": v1_14, "network_interface": v1_20, "resource_class": v1_21, "portgroups": v1_24,
	"boot_interface": v1_31, "console_interface": v1_31, "deploy_interface": v1_31, "inspect_interface": v1_31,
	"management_interface": v1_31, "power_interface": v1_31, "raid_interface": v1_31, "vendor_interface": v1_31,
	"volume":          v1_32,
	"traits":          v1_37,
	"allocation_uuid": v1_52,
	"owner":           v1_50, "lessee": v1_65,
}

// nodeInterfaceFields are the node fields naming an interface
// implementation that are settable as plain strings (1.20, 1.31).
var nodeInterfaceFields = []string{"network_interface", "boot_interface", "console_interface", "deploy_interface",
	"inspect_interface", "management_interface", "power_interface", "raid_interface", "vendor_interface"}

// nodeListFields are the fields of a non-detail node list item.
var nodeListFields = []string{"uuid", "instance_uuid", "maintenance", "power_state", "provision_state", "links", "name"}

// chassisUUIDs caches chassis id → uuid while one response is built.
type chassisUUIDs map[int64]string

func (s *server) chassisUUID(ctx context.Context, cache chassisUUIDs, id *int64) (any, error) {
	if id == nil {
		return nil, nil
	}
	if u, ok := cache[*id]; ok {
		return u, nil
	}
	obj, err := s.Store.Load(ctx, "Chassis", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.id = ?", *id) })
	if err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	u := obj.(*objects.Chassis).UUID
	cache[*id] = u
	return u, nil
}

// nodeView is the node as Ironic shows it at the request's version, with
// secrets masked and newer fields hidden.
func (s *server) nodeView(r *http.Request, n *objects.Node, cache chassisUUIDs) (map[string]any, error) {
	view, err := s.unmaskedNodeView(r, n, cache)
	if err != nil {
		return nil, err
	}
	redactNodeView(r, n, view)
	return maskView(view), nil
}

// unmaskedNodeView is nodeView before masking: the document a PATCH
// applies to.
func (s *server) unmaskedNodeView(r *http.Request, n *objects.Node, cache chassisUUIDs) (map[string]any, error) {
	c := s.newNodeViewCtx(r, cache)
	fields := s.nodeViewFieldsAt(c.v)
	view := make(map[string]any, len(fields))
	for _, f := range fields {
		val, err := f.value(c, n)
		if err != nil {
			return nil, err
		}
		view[f.name] = val
	}
	return view, nil
}

// nodeViewCtx is what a node's view is read from besides the node: the
// request, its version, and the lookups the nodes of one response share.
type nodeViewCtx struct {
	s           *server
	r           *http.Request
	v           version.Version
	chassis     chassisUUIDs
	allocations *uuidCache
}

func (s *server) newNodeViewCtx(r *http.Request, chassis chassisUUIDs) *nodeViewCtx {
	return &nodeViewCtx{s: s, r: r, v: VersionFrom(r.Context()), chassis: chassis, allocations: s.uuids("Allocation")}
}

// nodeViewField is one field of a node's view: its name, how its value is
// read from the node (unmasked), and for the resource links the path after
// the node's UUID ("", "/ports", …), which the node list writes without
// building the links.
type nodeViewField struct {
	name  string
	value func(c *nodeViewCtx, n *objects.Node) (any, error)
	links string
	link  bool
	doc   bool // a JSON document (a map field of the node)
	// reads are the JSON documents the value reads besides its own field:
	// a node list decodes them (rawNodeDocuments).
	reads []string
}

// nodeViewTable is every field of a node's view (traits aside: views get
// it from addNodeTraits, for every node of a list in one query), in
// nodeFields' order: the one definition nodeView and the node list's
// streamed view (nodes_list_stream.go) both read.
var nodeViewTable = sync.OnceValue(func() []nodeViewField {
	plain := func(name string, get func(n *objects.Node) any) nodeViewField {
		return nodeViewField{name: name, value: func(_ *nodeViewCtx, n *objects.Node) (any, error) { return get(n), nil }}
	}
	str := func(name string, get func(n *objects.Node) *string) nodeViewField {
		return plain(name, func(n *objects.Node) any { return strOrNil(get(n)) })
	}
	doc := func(name string, get func(n *objects.Node) map[string]any) nodeViewField {
		f := plain(name, func(n *objects.Node) any { return orEmpty(get(n)) })
		f.doc = true
		return f
	}
	ts := func(name string, get func(n *objects.Node) *time.Time) nodeViewField {
		return plain(name, func(n *objects.Node) any { return isoTimePtr(get(n)) })
	}
	readsDII := func(f nodeViewField) nodeViewField { // bootModeOf
		f.reads = []string{"driver_internal_info"}
		return f
	}
	links := func(name, rest string) nodeViewField {
		return nodeViewField{name: name, links: rest, link: true, value: func(c *nodeViewCtx, n *objects.Node) (any, error) {
			return resourceLinks(c.r, "nodes", n.UUID+rest), nil
		}}
	}
	t := []nodeViewField{
		plain("uuid", func(n *objects.Node) any { return n.UUID }),
		plain("created_at", func(n *objects.Node) any { return isoTime(n.CreatedAt) }),
		ts("updated_at", func(n *objects.Node) *time.Time { return n.UpdatedAt }),
		{name: "chassis_uuid", value: func(c *nodeViewCtx, n *objects.Node) (any, error) {
			return c.s.chassisUUID(c.r.Context(), c.chassis, n.ChassisID)
		}},
		plain("console_enabled", func(n *objects.Node) any { return n.ConsoleEnabled }),
		plain("driver", func(n *objects.Node) any { return n.Driver }),
		doc("driver_info", func(n *objects.Node) map[string]any { return n.DriverInfo }),
		doc("extra", func(n *objects.Node) map[string]any { return n.Extra }),
		doc("instance_info", func(n *objects.Node) map[string]any { return n.InstanceInfo }),
		str("instance_uuid", func(n *objects.Node) *string { return n.InstanceUUID }),
		str("last_error", func(n *objects.Node) *string { return n.LastError }),
		plain("maintenance", func(n *objects.Node) any { return n.Maintenance }),
		str("maintenance_reason", func(n *objects.Node) *string { return n.MaintenanceReason }),
		str("power_state", func(n *objects.Node) *string { return n.PowerState }),
		doc("properties", func(n *objects.Node) map[string]any { return n.Properties }),
		{name: "provision_state", value: func(c *nodeViewCtx, n *objects.Node) (any, error) {
			return provisionStateView(c.v, n.ProvisionState), nil
		}},
		ts("provision_updated_at", func(n *objects.Node) *time.Time { return n.ProvisionUpdatedAt }),
		str("reservation", func(n *objects.Node) *string { return n.Reservation }),
		str("target_power_state", func(n *objects.Node) *string { return n.TargetPowerState }),
		str("target_provision_state", func(n *objects.Node) *string { return n.TargetProvisionState }),
		links("links", ""),
		links("ports", "/ports"),
		doc("driver_internal_info", func(n *objects.Node) map[string]any { return n.DriverInternalInfo }),
		str("name", func(n *objects.Node) *string { return n.Name }),
		ts("inspection_started_at", func(n *objects.Node) *time.Time { return n.InspectionStartedAt }),
		ts("inspection_finished_at", func(n *objects.Node) *time.Time { return n.InspectionFinishedAt }),
		doc("clean_step", func(n *objects.Node) map[string]any { return n.CleanStep }),
		doc("raid_config", func(n *objects.Node) map[string]any { return n.RAIDConfig }),
		doc("target_raid_config", func(n *objects.Node) map[string]any { return n.TargetRAIDConfig }),
		links("states", "/states"),
		str("resource_class", func(n *objects.Node) *string { return n.ResourceClass }),
		links("portgroups", "/portgroups"),
		links("volume", "/volume"),
		{name: "allocation_uuid", value: func(c *nodeViewCtx, n *objects.Node) (any, error) {
			return c.allocations.get(c.r.Context(), n.AllocationID)
		}},
		str("owner", func(n *objects.Node) *string { return n.Owner }),
		str("lessee", func(n *objects.Node) *string { return n.Lessee }),
		str("fault", func(n *objects.Node) *string { return n.Fault }),
		doc("deploy_step", func(n *objects.Node) map[string]any { return n.DeployStep }),
		plain("conductor_group", func(n *objects.Node) any { return n.ConductorGroup }),
		plain("automated_clean", func(n *objects.Node) any { return boolOrNil(n.AutomatedClean) }),
		plain("protected", func(n *objects.Node) any { return n.Protected }),
		str("protected_reason", func(n *objects.Node) *string { return n.ProtectedReason }),
		{name: "conductor", value: func(c *nodeViewCtx, n *objects.Node) (any, error) {
			return c.s.conductorFor(c.r.Context(), n), nil
		}},
		str("description", func(n *objects.Node) *string { return n.Description }),
		plain("retired", func(n *objects.Node) any { return n.Retired }),
		str("retired_reason", func(n *objects.Node) *string { return n.RetiredReason }),
		readsDII(plain("boot_mode", func(n *objects.Node) any { mode, _ := bootModeOf(n); return mode })),
		readsDII(plain("secure_boot", func(n *objects.Node) any { _, secure := bootModeOf(n); return secure })),
		str("shard", func(n *objects.Node) *string { return n.Shard }),
		str("parent_node", func(n *objects.Node) *string { return n.ParentNode }),
		plain("disable_power_off", func(n *objects.Node) any { return n.DisablePowerOff }),
		str("instance_name", func(n *objects.Node) *string { return n.InstanceName }),
		str("health", func(n *objects.Node) *string { return n.Health }),
		doc("service_step", func(n *objects.Node) map[string]any { return n.ServiceStep }),
		doc("network_data", func(n *objects.Node) map[string]any { return n.NetworkData }),
	}
	for _, f := range nodeInterfaceFields {
		iface := strings.TrimSuffix(f, "_interface")
		t = append(t, str(f, func(n *objects.Node) *string { return *n.InterfaceField(iface) }))
	}
	return t
})

// nodeViewKey is a request's version under the effective pin of Node.
type nodeViewKey struct {
	v, pinned version.Version
	isPinned  bool
}

// nodeViewFieldsAt returns the fields of a node's view at version v, by
// name: those nodeSince does not hide at v, less the object fields the
// effective (pinned) release's Node lacks (hideUnpinned).
func (s *server) nodeViewFieldsAt(v version.Version) []*nodeViewField {
	ov, isPinned := s.Pinner.Effective().ObjectVersion("Node")
	key := nodeViewKey{v: v, pinned: ov, isPinned: isPinned}
	if f, ok := s.nodeViews.Load(key); ok {
		return f.([]*nodeViewField)
	}
	var hidden []string
	if isPinned {
		hidden = s.unpinnedFields("Node", ov)
	}
	table := nodeViewTable()
	out := make([]*nodeViewField, 0, len(table))
	for i := range table {
		f := &table[i]
		if since, gated := nodeSince[f.name]; gated && v.Less(since) || slices.Contains(hidden, f.name) {
			continue
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *nodeViewField) int { return strings.Compare(a.name, b.name) })
	s.nodeViews.Store(key, out)
	return out
}

// hideUnpinned removes object fields the effective (pinned) release's
// object version of kind does not have, so a pinned API never shows data
// older services cannot hold.
func (s *server) hideUnpinned(view map[string]any, kind string) {
	ov, ok := s.Pinner.Effective().ObjectVersion(kind)
	if !ok {
		return
	}
	for _, f := range s.unpinnedFields(kind, ov) {
		delete(view, f)
	}
}

// unpinnedKey is a kind at an object version.
type unpinnedKey struct {
	kind string
	v    version.Version
}

// unpinnedFields returns kind's fields that its version ov lacks,
// computed once per kind and version (the registry does not change).
func (s *server) unpinnedFields(kind string, ov version.Version) []string {
	key := unpinnedKey{kind, ov}
	if f, ok := s.unpinned.Load(key); ok {
		return f.([]string)
	}
	avail := s.reg.FieldsAt(kind, ov)
	all, err := s.reg.FieldTable(kind)
	if err != nil {
		return nil
	}
	var hide []string
	for _, f := range all {
		if !slices.Contains(avail, f.Name) {
			hide = append(hide, f.Name)
		}
	}
	s.unpinned.Store(key, hide)
	return hide
}

// getNodeByIdent finds a node by UUID, or by name from 1.5 (reference:
// Ironic's get_rpc_node): below 1.5 a non-UUID is simply not found; from
// 1.5 an invalid name is 400.
func (s *server) getNodeByIdent(r *http.Request, ident string) (*objects.Node, error) {
	n, _, err := s.nodeByIdent(r, ident, false)
	return n, err
}

// nodeByIdent is getNodeByIdent, with the node's traits when withTraits
// is set (read in the node's own statement, db.Store.GetNodeWithTraits).
func (s *server) nodeByIdent(r *http.Request, ident string, withTraits bool) (*objects.Node, []string, error) {
	v := VersionFrom(r.Context())
	if !isUUID(ident) {
		if v.Less(v1_5) {
			return nil, nil, errNodeNotFound(ident)
		}
		if !validLogicalName(ident, v) {
			return nil, nil, errorf(http.StatusBadRequest, "Expected a logical name or UUID but received %s.", ident)
		}
	}
	var (
		n      *objects.Node
		traits []string
		err    error
	)
	if withTraits {
		n, traits, err = s.Store.GetNodeWithTraits(r.Context(), ident)
	} else {
		n, err = s.Store.GetNode(r.Context(), ident)
	}
	if err != nil {
		if isNotFound(err) {
			return nil, nil, errNodeNotFound(ident)
		}
		return nil, nil, err
	}
	// Without a project scope every node is visible: the not-found error
	// (a formatted message) is built only when it may be the answer.
	if scopeOf(r) != nil {
		if err := s.authorizeNode(r, n, errNodeNotFound(ident)); err != nil {
			return nil, nil, err
		}
	}
	return n, traits, nil
}

func errNodeNotFound(ident string) *Error {
	return errorf(http.StatusNotFound, "Node %s could not be found.", ident)
}

// nodeByID loads a node by primary key (for ports and portgroups).
func (s *server) nodeByID(ctx context.Context, id int64) (*objects.Node, error) {
	obj, err := s.Store.Load(ctx, "Node", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.id = ?", id) })
	if err != nil {
		return nil, err
	}
	return obj.(*objects.Node), nil
}
