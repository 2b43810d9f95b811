package api

import (
	"context"
	"net/http"
	"slices"
	"strings"

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
	v := VersionFrom(r.Context())
	chassis, err := s.chassisUUID(r.Context(), cache, n.ChassisID)
	if err != nil {
		return nil, err
	}
	prov := provisionStateView(v, n.ProvisionState)
	view := map[string]any{
		"uuid": n.UUID, "created_at": isoTime(n.CreatedAt), "updated_at": isoTimePtr(n.UpdatedAt),
		"chassis_uuid": chassis, "console_enabled": n.ConsoleEnabled, "driver": n.Driver,
		"driver_info": orEmpty(n.DriverInfo), "extra": orEmpty(n.Extra),
		"instance_info": orEmpty(n.InstanceInfo), "instance_uuid": strOrNil(n.InstanceUUID),
		"last_error": strOrNil(n.LastError), "maintenance": n.Maintenance,
		"maintenance_reason": strOrNil(n.MaintenanceReason), "power_state": strOrNil(n.PowerState),
		"properties": orEmpty(n.Properties), "provision_state": prov,
		"provision_updated_at": isoTimePtr(n.ProvisionUpdatedAt), "reservation": strOrNil(n.Reservation),
		"target_power_state": strOrNil(n.TargetPowerState), "target_provision_state": strOrNil(n.TargetProvisionState),
		"links": resourceLinks(r, "nodes", n.UUID), "ports": resourceLinks(r, "nodes", n.UUID+"/ports"),
		"driver_internal_info": orEmpty(n.DriverInternalInfo), "name": strOrNil(n.Name),
		"inspection_started_at": isoTimePtr(n.InspectionStartedAt), "inspection_finished_at": isoTimePtr(n.InspectionFinishedAt),
		"clean_step": orEmpty(n.CleanStep), "raid_config": orEmpty(n.RAIDConfig), "target_raid_config": orEmpty(n.TargetRAIDConfig),
		"states": resourceLinks(r, "nodes", n.UUID+"/states"), "network_interface": strOrNil(n.NetworkInterface),
		"resource_class": strOrNil(n.ResourceClass), "portgroups": resourceLinks(r, "nodes", n.UUID+"/portgroups"),
		"volume": resourceLinks(r, "nodes", n.UUID+"/volume"),
		"owner":  strOrNil(n.Owner), "lessee": strOrNil(n.Lessee),
	}
	for _, f := range nodeInterfaceFields {
		view[f] = strOrNil(*n.InterfaceField(strings.TrimSuffix(f, "_interface")))
	}
	s.addNodeView03(r.Context(), view, n)
	view["network_data"] = orEmpty(n.NetworkData)
	if view["allocation_uuid"], err = s.allocationUUID(r, n); err != nil {
		return nil, err
	}
	nodeSince.hide(view, v)
	s.hideUnpinned(view, "Node")
	return view, nil
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
	v := VersionFrom(r.Context())
	if !isUUID(ident) {
		if v.Less(v1_5) {
			return nil, errNodeNotFound(ident)
		}
		if !validLogicalName(ident, v) {
			return nil, errorf(http.StatusBadRequest, "Expected a logical name or UUID but received %s.", ident)
		}
	}
	n, err := s.Store.GetNode(r.Context(), ident)
	if err != nil {
		if isNotFound(err) {
			return nil, errNodeNotFound(ident)
		}
		return nil, err
	}
	// Without a project scope every node is visible: the not-found error
	// (a formatted message) is built only when it may be the answer.
	if scopeOf(r) != nil {
		if err := s.authorizeNode(r, n, errNodeNotFound(ident)); err != nil {
			return nil, err
		}
	}
	return n, nil
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
