package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/uptrace/bun"
)

// The node fields, filters and parameters of API 1.33-1.109 (release 0.3,
// Node 1.2), as Ironic's node controller has them.

// Microversions of the node's later fields and verbs.
var (
	v1_33  = version.Version{Major: 1, Minor: 33}
	v1_38  = version.Version{Major: 1, Minor: 38}
	v1_40  = version.Version{Major: 1, Minor: 40}
	v1_42  = version.Version{Major: 1, Minor: 42}
	v1_43  = version.Version{Major: 1, Minor: 43}
	v1_44  = version.Version{Major: 1, Minor: 44}
	v1_45  = version.Version{Major: 1, Minor: 45}
	v1_46  = version.Version{Major: 1, Minor: 46}
	v1_47  = version.Version{Major: 1, Minor: 47}
	v1_48  = version.Version{Major: 1, Minor: 48}
	v1_49  = version.Version{Major: 1, Minor: 49}
	v1_51  = version.Version{Major: 1, Minor: 51}
	v1_61  = version.Version{Major: 1, Minor: 61}
	v1_73  = version.Version{Major: 1, Minor: 73}
	v1_75  = version.Version{Major: 1, Minor: 75}
	v1_82  = version.Version{Major: 1, Minor: 82}
	v1_83  = version.Version{Major: 1, Minor: 83}
	v1_85  = version.Version{Major: 1, Minor: 85}
	v1_86  = version.Version{Major: 1, Minor: 86}
	v1_95  = version.Version{Major: 1, Minor: 95}
	v1_104 = version.Version{Major: 1, Minor: 104}
	v1_109 = version.Version{Major: 1, Minor: 109}
)

// nodeSince03 extends nodeSince (Ironic's VERSIONED_FIELDS).
var nodeSince03 = gated{
	"storage_interface": v1_33, "rescue_interface": v1_38, "bios_interface": v1_40, "fault": v1_42,
	"deploy_step": v1_44, "conductor_group": v1_46, "automated_clean": v1_47,
	"protected": v1_48, "protected_reason": v1_48, "conductor": v1_49, "description": v1_51,
	"retired": v1_61, "retired_reason": v1_61, "boot_mode": v1_75, "secure_boot": v1_75,
	"shard": v1_82, "parent_node": v1_83, "firmware_interface": v1_86, "disable_power_off": v1_95,
	"instance_name": v1_104, "health": v1_109, "service_step": v1_87,
}

// nodeInterfaceFields03 are the interface fields of 1.33 (storage), 1.38
// (rescue), 1.40 (bios) and 1.86 (firmware).
var nodeInterfaceFields03 = []string{"storage_interface", "rescue_interface", "bios_interface", "firmware_interface"}

// nodeCreatable03 are the later fields POST /v1/nodes takes (Ironic's
// node_schema); protected and protected_reason only PATCH sets.
var nodeCreatable03 = []string{"conductor_group", "automated_clean", "description", "retired", "retired_reason",
	"shard", "parent_node", "disable_power_off", "instance_name"}

func init() {
	for f, v := range nodeSince03 {
		nodeSince[f] = v
	}
	nodeInterfaceFields = append(nodeInterfaceFields, nodeInterfaceFields03...)
	nodeFields = append(nodeFields, "storage_interface", "rescue_interface", "bios_interface", "fault",
		"deploy_step", "conductor_group", "automated_clean", "protected", "protected_reason", "conductor",
		"description", "retired", "retired_reason", "boot_mode", "secure_boot", "shard", "parent_node",
		"firmware_interface", "disable_power_off", "instance_name", "health", "service_step")
	nodeCreatable = append(nodeCreatable, nodeInterfaceFields03...)
	nodeCreatable = append(nodeCreatable, nodeCreatable03...)
}

// v1_91 is the version from which a path's ".json" suffix is part of the
// resource's name.
var v1_91 = version.Version{Major: 1, Minor: 91}

// stripJSONSuffix drops a path's ".json" suffix for a request that names
// a version below 1.91 in its header, as Ironic's JsonExtensionMiddleware
// (kept from its pecan days): GET /v1/nodes/n1.json is node n1 there. No
// header (or "latest") leaves the path alone, as Ironic's does.
func stripJSONSuffix(r *http.Request, v version.Version) {
	h := strings.TrimSpace(r.Header.Get(HeaderVersion))
	if h == "" || strings.EqualFold(h, "latest") || !v.Less(v1_91) {
		return
	}
	p := strings.TrimRight(r.URL.Path, "/")
	if strings.HasSuffix(p, ".json") {
		r.URL.Path = strings.TrimSuffix(p, ".json")
		r.URL.RawPath = ""
	}
}

// driverInterfaceSince gates a driver's default_/enabled_ fields of the
// interfaces newer than 1.30, as Ironic's driver view.
var driverInterfaceSince = map[string]version.Version{"storage": v1_33, "rescue": v1_38, "bios": v1_40, "firmware": v1_86}

// nodeDescriptionMax is Ironic's _NODE_DESCRIPTION_MAX_LENGTH.
const nodeDescriptionMax = 4096

func boolOrNil(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

// bootModeOf is the node's boot mode ("uefi", "bios") and whether secure
// boot is on, as the conductor last read them from the BMC into
// driver_internal_info; null when never read.
func bootModeOf(n *objects.Node) (mode, secure any) {
	if m, ok := n.DriverInternalInfo["boot_mode"].(string); ok && m != "" {
		mode = m
	}
	if b, ok := n.DriverInternalInfo["secure_boot"].(bool); ok {
		secure = b
	}
	return mode, secure
}

// conductorFor is the hostname of the conductor the hash ring maps the
// node to (API 1.49), or null when none serves it, as Ironic's
// get_conductor_for.
func (s *server) conductorFor(ctx context.Context, n *objects.Node) any {
	if s.ring == nil {
		return nil
	}
	host, err := s.ring.HostFor(ctx, rpc.Target{UUID: n.UUID, Driver: n.Driver, Group: n.ConductorGroup})
	if err != nil || host == "" {
		return nil
	}
	return host
}

// conductorGroupRe is what Ironic's validate_conductor_group accepts.
var conductorGroupRe = regexp.MustCompile(`^[a-zA-Z0-9_\-.]*$`)

// applyNodeAttrs03 sets the later fields a POST or patched document
// carries, with Ironic's validation and messages.
func (s *server) applyNodeAttrs03(r *http.Request, n *objects.Node, body object) error {
	strs := []struct {
		attr string
		dst  **string
	}{{"description", &n.Description}, {"instance_name", &n.InstanceName}, {"protected_reason", &n.ProtectedReason},
		{"retired_reason", &n.RetiredReason}, {"shard", &n.Shard}}
	for _, sf := range strs {
		attr, dst := sf.attr, sf.dst
		val, present, err := body.str(attr, true)
		if err != nil {
			return err
		}
		if !present {
			continue
		}
		switch attr {
		case "description":
			if val != nil && len([]rune(*val)) > nodeDescriptionMax {
				return errorf(http.StatusBadRequest, "Cannot update node with description exceeding %d characters", nodeDescriptionMax)
			}
		case "instance_name":
			if val != nil && (len(*val) < 1 || len([]rune(*val)) > 255) {
				return errorf(http.StatusBadRequest, "Invalid input for field/attribute instance_name. Value: '%s'. "+
					"Value should have a minimum character requirement of 1 and a maximum of 255", *val)
			}
		}
		*dst = val
	}
	if val, present, err := body.str("conductor_group", true); err != nil {
		return err
	} else if present {
		g := ""
		if val != nil {
			g = *val
		}
		if !conductorGroupRe.MatchString(g) || len(g) > 255 {
			return errorf(http.StatusBadRequest, "Expected a conductor group but received %s.", g)
		}
		n.ConductorGroup = strings.ToLower(g)
	}
	bools := []struct {
		attr string
		dst  *bool
	}{{"disable_power_off", &n.DisablePowerOff}, {"protected", &n.Protected}, {"retired", &n.Retired}}
	for _, bf := range bools {
		attr, dst := bf.attr, bf.dst
		b, present, err := looseBool(body, attr)
		if err != nil {
			return err
		}
		if present {
			*dst = b != nil && *b // null is false: the fields are not nullable
		}
	}
	if b, present, err := looseBool(body, "automated_clean"); err != nil {
		return err
	} else if present {
		n.AutomatedClean = b
	}
	if val, present, err := body.str("parent_node", true); err != nil {
		return err
	} else if present {
		if val == nil || *val == "" {
			n.ParentNode = nil
		} else {
			parent, err := s.nodeLink(r, *val, "parent_node")
			if err != nil {
				return err
			}
			n.ParentNode = &parent.UUID
		}
	}
	return nil
}

// looseBool reads a boolean attribute as Ironic's node schema takes it: a
// JSON boolean, null, or a string oslo's bool_from_string reads ("true",
// "off", "1"...).
func looseBool(body object, attr string) (*bool, bool, error) {
	raw, ok := body[attr]
	if !ok {
		return nil, false, nil
	}
	if isNull(raw) {
		return nil, true, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		b, err := parseBool(attr, s)
		if err != nil {
			return nil, true, err
		}
		return &b, true, nil
	}
	return body.boolean(attr)
}

// resetUnpatchedInterfaces sets the interfaces a PATCH with
// ?reset_interfaces=true does not set back to nil, for the conductor to
// fill with the new hardware type's defaults (Ironic's update_node).
func resetUnpatchedInterfaces(n *objects.Node, changed object) {
	if _, driver := changed["driver"]; !driver {
		return // the driver did not change: Ironic resets nothing
	}
	for _, f := range nodeInterfaceFields {
		if _, set := changed[f]; !set {
			*n.InterfaceField(strings.TrimSuffix(f, "_interface")) = nil
		}
	}
}

// nodeLink resolves a node a field links to (parent_node) by UUID or
// name, with Ironic's authorize_node_link answer for one that is not
// found: 400, not disclosing whether it exists.
func (s *server) nodeLink(r *http.Request, ident, field string) (*objects.Node, error) {
	if len(ident) > 36 {
		return nil, errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: '%s'. Value should have a maximum character requirement of 36", field, ident)
	}
	n, err := s.Store.GetNode(r.Context(), ident)
	if err != nil {
		if isNotFound(err) {
			return nil, errorf(http.StatusBadRequest, "Unable to apply the requested %s '%s'. Requested value was invalid.", field, ident)
		}
		return nil, err
	}
	return n, nil
}

// resetInterfacesParam reads PATCH's ?reset_interfaces (1.45; 406 below),
// a boolean; nil when absent.
func resetInterfacesParam(r *http.Request) (*bool, error) {
	q := r.URL.Query()
	if !q.Has("reset_interfaces") {
		return nil, nil
	}
	b, err := parseBool("reset_interfaces", q.Get("reset_interfaces"))
	if err != nil {
		return nil, err
	}
	if VersionFrom(r.Context()).Less(v1_45) {
		return nil, errNotAcceptable()
	}
	return &b, nil
}

// patchSets reports whether the patch adds or replaces path (Ironic's
// get_patch_values).
func patchSets(ops []patchOp, path string) bool {
	for _, op := range ops {
		if op.Path == path && op.Op != "remove" {
			return true
		}
	}
	return false
}

// nodeFilters03 are the list filters of 1.42-1.104: each 406 below its
// version with Ironic's message, as its check_allow_filter_by_* do.
var nodeFilters03 = []nodeFilter{{"fault", v1_42}, {"conductor_group", v1_46}, {"conductor", v1_49},
	{"shard", v1_82}, {"sharded", v1_82}, {"include_children", v1_83}, {"parent_node", v1_83},
	{"instance_name", v1_104}}

// checkNodeFilters03 answers 406 for a filter newer than the request.
func checkNodeFilters03(r *http.Request) error {
	q, v := r.URL.Query(), VersionFrom(r.Context())
	for _, f := range nodeFilters03 {
		if q.Has(f.name) && v.Less(f.since) {
			return errorf(http.StatusNotAcceptable, "Request not acceptable. The minimal required API version should be %s", f.since)
		}
	}
	return nil
}

// nodeWhere03 adds the later filters to a node list's conditions. Child
// nodes (with a parent_node) are left out unless ?include_children=True
// or ?parent_node= asks for them, at every version, as Ironic's node
// query does.
func (s *server) nodeWhere03(r *http.Request, add func(func(*bun.SelectQuery) *bun.SelectQuery)) error {
	q := r.URL.Query()
	eq := func(col, val string) {
		add(func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.? = ?", bun.Ident(col), val) })
	}
	if q.Has("fault") {
		f := q.Get("fault")
		if !slices.Contains(objects.ValidFaults, f) {
			quoted := make([]string, len(objects.ValidFaults))
			for i, vf := range objects.ValidFaults {
				quoted[i] = "'" + vf + "'"
			}
			return errorf(http.StatusBadRequest, "Unrecognized fault \"%s\" is specified, allowed faults are (%s)", f, strings.Join(quoted, ", "))
		}
		eq("fault", f)
	}
	if q.Has("conductor_group") {
		eq("conductor_group", strings.ToLower(q.Get("conductor_group")))
	}
	for _, col := range []string{"instance_name"} {
		if q.Has(col) {
			eq(col, q.Get(col))
		}
	}
	for _, name := range []string{"retired", "sharded"} {
		if !q.Has(name) {
			continue
		}
		b, err := parseBool(name, q.Get(name))
		if err != nil {
			return err
		}
		switch name {
		case "retired":
			add(func(q *bun.SelectQuery) *bun.SelectQuery {
				return q.Where("COALESCE(?TableAlias.retired, ?) = ?", false, b)
			})
		case "sharded":
			op := "IS NULL"
			if b {
				op = "IS NOT NULL"
			}
			add(func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.shard " + op) })
		}
	}
	if shards := stringList(q, "shard"); len(shards) > 0 { // lower-cased, as Ironic's
		add(func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.shard IN (?)", bun.In(shards)) })
	}
	if q.Has("description_contains") {
		kw := q.Get("description_contains")
		add(func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("?TableAlias.description LIKE ?", "%"+kw+"%")
		})
	}
	children := false
	if q.Has("include_children") {
		var err error
		if children, err = parseBool("include_children", q.Get("include_children")); err != nil {
			return err
		}
	}
	if !children {
		if q.Has("parent_node") {
			eq("parent_node", q.Get("parent_node"))
		} else {
			add(func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.parent_node IS NULL") })
		}
	}
	return nil
}

// filterByConductor keeps the nodes the hash ring maps to host (?conductor=,
// 1.49), as Ironic filters after the query.
func (s *server) filterByConductor(ctx context.Context, nodes []*objects.Node, host string) []*objects.Node {
	out := nodes[:0]
	for _, n := range nodes {
		if c, ok := s.conductorFor(ctx, n).(string); ok && c == host {
			out = append(out, n)
		}
	}
	return out
}

// listShards serves GET /v1/shards (1.82): each shard's node count, the
// largest first; nodes without a shard count as "None", as Ironic's
// str(None).
func (s *server) listShards(w http.ResponseWriter, r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_82) {
		return errorf(http.StatusNotFound, "The API version does not allow shards")
	}
	var rows []struct {
		Shard *string `bun:"shard"`
		Count int64   `bun:"count"`
	}
	err := s.Store.DB().Bun().NewSelect().Table("nodes").ColumnExpr("shard").ColumnExpr("COUNT(id) AS count").
		Group("shard").OrderExpr("count DESC").Scan(r.Context(), &rows)
	if err != nil {
		return err
	}
	shards := make([]map[string]any, 0, len(rows))
	for _, row := range rows {
		name := "None"
		if row.Shard != nil {
			name = *row.Shard
		}
		shards = append(shards, map[string]any{"name": name, "count": row.Count})
	}
	writeJSON(w, http.StatusOK, map[string]any{"shards": shards})
	return nil
}

// listChildren serves GET /v1/nodes/{node}/children (1.83): the UUIDs of
// the node's children and a link to the filtered list; 404 below 1.83.
func (s *server) listChildren(w http.ResponseWriter, r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_83) {
		return errorf(http.StatusNotFound, "The resource could not be found.")
	}
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	var uuids []string
	err = s.Store.DB().Bun().NewSelect().Table("nodes").Column("uuid").Where("parent_node = ?", n.UUID).
		OrderExpr("id ASC").Scan(r.Context(), &uuids)
	if err != nil {
		return err
	}
	if uuids == nil {
		uuids = []string{}
	}
	href := fmt.Sprintf("%s/v1/nodes/?parent_node=%s", BaseURL(r), n.UUID)
	writeJSON(w, http.StatusOK, map[string]any{"children": uuids,
		"links": map[string]any{"href": href, "rel": "children"}})
	return nil
}
