package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/htpasswd"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/uptrace/bun"
)

// Project-scoped access control, as Ironic's default (secure RBAC)
// policies with http_basic users given a scope by [api]
// http_basic_projects_file (docs/admin/security.md). A request without a
// scope — noauth, no projects file, or a user the file does not list —
// is unrestricted: every rule passes, as before projects existed.
//
// A project-scoped user sees only the nodes whose owner or lessee is its
// project; any other node (and its ports, portgroups, history) is "not
// found", never "forbidden", as Ironic conceals them. On a node it sees,
// a rule it fails is 403 naming Ironic's policy.

// ProjectScopes gives an authenticated user's scope; false leaves the
// user unrestricted. *htpasswd.Projects implements it.
type ProjectScopes interface {
	Scope(user string) (htpasswd.Scope, bool)
}

// scopeOf is the request's restricted scope, nil when unrestricted.
func scopeOf(r *http.Request) *htpasswd.Scope {
	if ri, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		return ri.scope
	}
	return nil
}

func setScope(r *http.Request, sc htpasswd.Scope) {
	if ri, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		ri.scope = &sc
	}
}

// rule is a policy check string of Ironic's (common/policy.py) over the
// scope and the node's owner and lessee.
type rule func(sc *htpasswd.Scope, owner, lessee string) bool

func sysRole(min htpasswd.Role) rule {
	return func(sc *htpasswd.Scope, _, _ string) bool { return sc.System() && sc.Role >= min }
}

func ownerRole(min htpasswd.Role) rule {
	return func(sc *htpasswd.Scope, owner, _ string) bool {
		return !sc.System() && sc.Role >= min && owner != "" && sc.Project == owner
	}
}

func lesseeRole(min htpasswd.Role) rule {
	return func(sc *htpasswd.Scope, _, lessee string) bool {
		return !sc.System() && sc.Role >= min && lessee != "" && sc.Project == lessee
	}
}

func anyOf(rs ...rule) rule {
	return func(sc *htpasswd.Scope, owner, lessee string) bool {
		for _, r := range rs {
			if r(sc, owner, lessee) {
				return true
			}
		}
		return false
	}
}

// Ironic's composite check strings.
var (
	systemAdmin                   = sysRole(htpasswd.Admin)
	systemMember                  = sysRole(htpasswd.Member)
	systemReader                  = sysRole(htpasswd.Reader)
	systemOrProjectReader         = anyOf(systemReader, ownerRole(htpasswd.Reader), lesseeRole(htpasswd.Reader))
	systemOrProjectMember         = anyOf(systemMember, ownerRole(htpasswd.Member), lesseeRole(htpasswd.Member))
	systemOrOwnerReader           = anyOf(systemReader, ownerRole(htpasswd.Reader))
	systemMemberOrOwnerMember     = anyOf(systemMember, ownerRole(htpasswd.Member))
	systemMemberOrOwnerAdmin      = anyOf(systemMember, ownerRole(htpasswd.Admin))
	systemAdminOrOwnerAdmin       = anyOf(systemAdmin, ownerRole(htpasswd.Admin))
	systemOrOwnerMemberLesseeAdmn = anyOf(systemMember, ownerRole(htpasswd.Member), lesseeRole(htpasswd.Admin))
)

// policy is a named rule; the name is what a 403 says was denied.
type policy struct {
	name  string
	allow rule
}

var (
	policyNodeGet          = policy{"baremetal:node:get", systemOrProjectReader}
	policyNodeUpdate       = policy{"baremetal:node:update", systemOrProjectMember}
	policyNodeCreate       = policy{"baremetal:node:create", systemAdmin}
	policyNodeCreateOwned  = policy{"baremetal:node:create:self_owned_node", ownerRole(htpasswd.Admin)}
	policyNodeDelete       = policy{"baremetal:node:delete", systemAdmin}
	policyNodeDeleteOwned  = policy{"baremetal:node:delete:self_owned_node", ownerRole(htpasswd.Admin)}
	policyFilterThreshold  = systemReader
	policySystemReadByDflt = policy{"system scope", systemReader}
	policySystemByDefault  = policy{"system scope", systemMember}
)

// nodePolicies are the rules of the routes acting on one node (the node
// of the path, or a port's or portgroup's node), beyond seeing it. PATCH
// and DELETE of a node decide in their handlers (per field, self-owned).
var nodePolicies = map[string]policy{
	"GET /v1/nodes/{node}":                                   policyNodeGet,
	"PUT /v1/nodes/{node}/maintenance":                       {"baremetal:node:set_maintenance", systemOrOwnerMemberLesseeAdmn},
	"DELETE /v1/nodes/{node}/maintenance":                    {"baremetal:node:clear_maintenance", systemOrOwnerMemberLesseeAdmn},
	"GET /v1/nodes/{node}/states":                            {"baremetal:node:get_states", systemOrProjectReader},
	"PUT /v1/nodes/{node}/states/power":                      {"baremetal:node:set_power_state", systemOrProjectMember},
	"PUT /v1/nodes/{node}/states/provision":                  {"baremetal:node:set_provision_state", systemOrOwnerMemberLesseeAdmn},
	"PUT /v1/nodes/{node}/states/raid":                       {"baremetal:node:set_raid_state", systemMemberOrOwnerMember},
	"GET /v1/nodes/{node}/states/console":                    {"baremetal:node:get_console", systemMemberOrOwnerMember},
	"PUT /v1/nodes/{node}/states/console":                    {"baremetal:node:set_console_state", systemMemberOrOwnerMember},
	"GET /v1/nodes/{node}/management/boot_device":            {"baremetal:node:get_boot_device", systemMemberOrOwnerAdmin},
	"PUT /v1/nodes/{node}/management/boot_device":            {"baremetal:node:set_boot_device", systemMemberOrOwnerAdmin},
	"GET /v1/nodes/{node}/management/boot_device/supported":  {"baremetal:node:get_boot_device", systemMemberOrOwnerAdmin},
	"PUT /v1/nodes/{node}/management/inject_nmi":             {"baremetal:node:inject_nmi", systemMemberOrOwnerAdmin},
	"GET /v1/nodes/{node}/validate":                          {"baremetal:node:validate", systemOrOwnerMemberLesseeAdmn},
	"GET /v1/nodes/{node}/vendor_passthru/methods":           {"baremetal:node:vendor_passthru", systemAdmin},
	"GET /v1/nodes/{node}/ports":                             {"baremetal:port:list", systemOrProjectReader},
	"GET /v1/nodes/{node}/ports/detail":                      {"baremetal:port:list", systemOrProjectReader},
	"GET /v1/nodes/{node}/portgroups":                        {"baremetal:portgroup:list", systemOrProjectReader},
	"GET /v1/nodes/{node}/portgroups/detail":                 {"baremetal:portgroup:list", systemOrProjectReader},
	"GET /v1/nodes/{node}/vifs":                              {"baremetal:node:vif:list", systemOrProjectReader},
	"POST /v1/nodes/{node}/vifs":                             {"baremetal:node:vif:attach", systemOrOwnerMemberLesseeAdmn},
	"DELETE /v1/nodes/{node}/vifs/{vif}":                     {"baremetal:node:vif:detach", systemOrOwnerMemberLesseeAdmn},
	"GET /v1/nodes/{node}/traits":                            {"baremetal:node:traits:list", systemOrProjectReader},
	"PUT /v1/nodes/{node}/traits":                            {"baremetal:node:traits:set", systemMemberOrOwnerAdmin},
	"PUT /v1/nodes/{node}/traits/{trait}":                    {"baremetal:node:traits:set", systemMemberOrOwnerAdmin},
	"DELETE /v1/nodes/{node}/traits":                         {"baremetal:node:traits:delete", systemMemberOrOwnerAdmin},
	"DELETE /v1/nodes/{node}/traits/{trait}":                 {"baremetal:node:traits:delete", systemMemberOrOwnerAdmin},
	"GET /v1/nodes/{node}/history":                           {"baremetal:node:history:get", systemOrOwnerReader},
	"GET /v1/nodes/{node}/history/{event}":                   {"baremetal:node:history:get", systemOrOwnerReader},
	"GET /v1/nodes/{node}/bios":                              {"baremetal:node:bios:get", systemOrProjectReader},
	"GET /v1/nodes/{node}/bios/{setting}":                    {"baremetal:node:bios:get", systemOrProjectReader},
	"GET /v1/nodes/{node}/inventory":                         {"baremetal:node:inventory:get", systemOrOwnerReader},
	"GET /v1/nodes/{node}/firmware":                          {"baremetal:node:firmware:get", systemOrProjectReader},
	"PUT /v1/nodes/{node}/states/boot_mode":                  {"baremetal:node:set_boot_mode", systemOrProjectMember},
	"PUT /v1/nodes/{node}/states/secure_boot":                {"baremetal:node:set_secure_boot", systemOrProjectMember},
	"GET /v1/nodes/{node}/management/indicators":             {"baremetal:node:get_indicator_state", systemOrProjectReader},
	"GET /v1/nodes/{node}/management/indicators/{indicator}": {"baremetal:node:get_indicator_state", systemOrProjectReader},
	"PUT /v1/nodes/{node}/management/indicators/{indicator}": {"baremetal:node:set_indicator_state", systemMemberOrOwnerMember},
	"GET /v1/nodes/{node}/vmedia":                            {"baremetal:node:vmedia:get", systemOrProjectReader},
	"POST /v1/nodes/{node}/vmedia":                           {"baremetal:node:vmedia:attach", systemOrProjectMember},
	"DELETE /v1/nodes/{node}/vmedia":                         {"baremetal:node:vmedia:detach", systemOrProjectMember},
	"GET /v1/nodes/{node}/children":                          policyNodeGet, // Ironic: forbidden is not found
	// The node's volume: /volume itself is the system's (getVolume,
	// which Ironic checks without the node); the lists are the node's;
	// an item or a create under a node is Ironic's 400 whoever asks.
	"GET /v1/nodes/{node}/volume":                    {"baremetal:volume:get", systemReader},
	"GET /v1/nodes/{node}/volume/connectors":         {"baremetal:volume:list", systemOrProjectReader},
	"GET /v1/nodes/{node}/volume/targets":            {"baremetal:volume:list", systemOrProjectReader},
	"POST /v1/nodes/{node}/volume/connectors":        policyVolumeCreate,
	"POST /v1/nodes/{node}/volume/targets":           policyVolumeCreate,
	"GET /v1/nodes/{node}/volume/connectors/{id}":    policyVolumeGet,
	"GET /v1/nodes/{node}/volume/targets/{id}":       policyVolumeGet,
	"PATCH /v1/nodes/{node}/volume/connectors/{id}":  policyVolumeUpdate,
	"PATCH /v1/nodes/{node}/volume/targets/{id}":     policyVolumeUpdate,
	"DELETE /v1/nodes/{node}/volume/connectors/{id}": policyVolumeDelete,
	"DELETE /v1/nodes/{node}/volume/targets/{id}":    policyVolumeDelete,
	"GET /v1/nodes/{node}/allocation":                policyNodeGet, // then the allocation's owner
	"DELETE /v1/nodes/{node}/allocation":             policyNodeGet, // then the allocation's owner
	"POST /v1/allocations":                           policyNodeGet, // a backfill's node: seeing it is enough
	"PATCH /v1/nodes/{node}":                         policyNodeGet, // per field in patchNode
	"DELETE /v1/nodes/{node}":                        policyNodeGet, // self-owned in deleteNode
	"GET /v1/ports":                                  {"baremetal:port:list", systemOrProjectReader},
	"GET /v1/ports/detail":                           {"baremetal:port:list", systemOrProjectReader},
	"POST /v1/ports":                                 {"baremetal:port:create", systemAdminOrOwnerAdmin},
	"GET /v1/ports/{port}":                           {"baremetal:port:get", systemOrProjectReader},
	"PATCH /v1/ports/{port}":                         {"baremetal:port:update", systemMemberOrOwnerAdmin},
	"DELETE /v1/ports/{port}":                        {"baremetal:port:delete", systemAdminOrOwnerAdmin},
	"GET /v1/portgroups":                             {"baremetal:portgroup:list", systemOrProjectReader},
	"GET /v1/portgroups/detail":                      {"baremetal:portgroup:list", systemOrProjectReader},
	"POST /v1/portgroups":                            {"baremetal:portgroup:create", systemAdminOrOwnerAdmin},
	"GET /v1/portgroups/{pg}":                        {"baremetal:portgroup:get", systemOrProjectReader},
	"PATCH /v1/portgroups/{pg}":                      {"baremetal:portgroup:update", systemMemberOrOwnerAdmin},
	"DELETE /v1/portgroups/{pg}":                     {"baremetal:portgroup:delete", systemAdminOrOwnerAdmin},
	"GET /v1/portgroups/{pg}/ports":                  {"baremetal:portgroup:get", systemOrProjectReader},
	"GET /v1/portgroups/{pg}/ports/detail":           {"baremetal:portgroup:get", systemOrProjectReader},
}

// globalPolicies are the rules of routes not about one node: a
// project-scoped user may list (filtered to its nodes) and create nodes,
// ports and portgroups; chassis and drivers are the system's (Ironic's
// scope_types ['system']).
var globalPolicies = map[string]policy{
	"GET /v1/nodes":                                         {"baremetal:node:list", anyOf(systemReader, projectAny)},
	"GET /v1/nodes/detail":                                  {"baremetal:node:list", anyOf(systemReader, projectAny)},
	"POST /v1/nodes":                                        {"baremetal:node:create", anyOf(systemAdmin, projectAny)}, // narrowed in createNode
	"GET /v1/ports":                                         {"baremetal:port:list", anyOf(systemReader, projectAny)},
	"GET /v1/ports/detail":                                  {"baremetal:port:list", anyOf(systemReader, projectAny)},
	"POST /v1/ports":                                        {"baremetal:port:create", anyOf(systemAdmin, projectAny)}, // on its node
	"GET /v1/portgroups":                                    {"baremetal:portgroup:list", anyOf(systemReader, projectAny)},
	"GET /v1/portgroups/detail":                             {"baremetal:portgroup:list", anyOf(systemReader, projectAny)},
	"POST /v1/portgroups":                                   {"baremetal:portgroup:create", anyOf(systemAdmin, projectAny)}, // on its node
	"GET /v1/chassis":                                       {"baremetal:chassis:get", systemReader},
	"GET /v1/chassis/detail":                                {"baremetal:chassis:get", systemReader},
	"POST /v1/chassis":                                      {"baremetal:chassis:create", systemAdmin},
	"GET /v1/chassis/{chassis}":                             {"baremetal:chassis:get", systemReader},
	"PATCH /v1/chassis/{chassis}":                           {"baremetal:chassis:update", systemMember},
	"DELETE /v1/chassis/{chassis}":                          {"baremetal:chassis:delete", systemAdmin},
	"GET /v1/chassis/{chassis}/nodes":                       {"baremetal:chassis:get", systemReader},
	"GET /v1/chassis/{chassis}/nodes/detail":                {"baremetal:chassis:get", systemReader},
	"GET /v1/drivers":                                       {"baremetal:driver:get", systemReader},
	"GET /v1/drivers/{driver}":                              {"baremetal:driver:get", systemReader},
	"GET /v1/drivers/{driver}/properties":                   {"baremetal:driver:get_properties", systemReader},
	"GET /v1/drivers/{driver}/raid/logical_disk_properties": {"baremetal:driver:get_raid_logical_disk_properties", systemReader},
	"GET /v1/allocations":                                   {"baremetal:allocation:list", anyOf(systemReader, projectAny)}, // the project's, in listAllocations
	"POST /v1/allocations":                                  {"baremetal:allocation:create", anyOf(systemMember, projectRole(htpasswd.Member))},
	"GET /v1/allocations/{allocation}":                      {"baremetal:allocation:get", anyOf(systemReader, projectAny)},    // owner in allocationByIdent
	"PATCH /v1/allocations/{allocation}":                    {"baremetal:allocation:update", anyOf(systemReader, projectAny)}, // owner in allocationByIdent
	"DELETE /v1/allocations/{allocation}":                   {"baremetal:allocation:delete", anyOf(systemReader, projectAny)}, // owner in allocationByIdent
	"GET /v1/shards":                                        {"baremetal:shards:get", systemReader},
	"GET /v1/runbooks":                                      {"baremetal:runbook:list", anyOf(systemReader, projectAny)},   // the project's and public ones
	"POST /v1/runbooks":                                     {"baremetal:runbook:create", anyOf(systemReader, projectAny)}, // runbookAccess decides
	"GET /v1/runbooks/{ident}":                              {"baremetal:runbook:get", anyOf(systemReader, projectAny)},
	"PATCH /v1/runbooks/{ident}":                            {"baremetal:runbook:update", anyOf(systemReader, projectAny)},
	"DELETE /v1/runbooks/{ident}":                           {"baremetal:runbook:delete", anyOf(systemReader, projectAny)},
	"GET /v1/volume":                                        {"baremetal:volume:get", systemReader},
	"GET /v1/volume/connectors":                             {"baremetal:volume:list", anyOf(systemReader, projectAny)}, // the project's nodes'
	"GET /v1/volume/targets":                                {"baremetal:volume:list", anyOf(systemReader, projectAny)},
	"POST /v1/volume/connectors":                            {"baremetal:volume:create", anyOf(systemMember, projectAny)}, // on the node, in createVolume
	"POST /v1/volume/targets":                               {"baremetal:volume:create", anyOf(systemMember, projectAny)},
	"GET /v1/volume/connectors/{id}":                        {"baremetal:volume:get", anyOf(systemReader, projectAny)}, // on the node, in authorizeVolume
	"GET /v1/volume/targets/{id}":                           {"baremetal:volume:get", anyOf(systemReader, projectAny)},
	"PATCH /v1/volume/connectors/{id}":                      {"baremetal:volume:update", anyOf(systemReader, projectAny)},
	"PATCH /v1/volume/targets/{id}":                         {"baremetal:volume:update", anyOf(systemReader, projectAny)},
	"DELETE /v1/volume/connectors/{id}":                     {"baremetal:volume:delete", anyOf(systemReader, projectAny)},
	"DELETE /v1/volume/targets/{id}":                        {"baremetal:volume:delete", anyOf(systemReader, projectAny)},
	"GET /v1/conductors":                                    {"baremetal:conductor:get", systemReader},
	"GET /v1/conductors/{hostname}":                         {"baremetal:conductor:get", systemReader},
	"POST /v1/events":                                       {"baremetal:events:post", systemAdmin},
	"GET /v1/deploy_templates":                              {"baremetal:deploy_template:get", systemReader},
	"GET /v1/deploy_templates/{ident}":                      {"baremetal:deploy_template:get", systemReader},
	"POST /v1/deploy_templates":                             {"baremetal:deploy_template:create", systemAdmin},
	"PATCH /v1/deploy_templates/{ident}":                    {"baremetal:deploy_template:update", systemAdmin},
	"DELETE /v1/deploy_templates/{ident}":                   {"baremetal:deploy_template:delete", systemAdmin},
	"GET /v1/inspection_rules":                              {"baremetal:inspection_rule:get", systemReader},
	"GET /v1/inspection_rules/{ident}":                      {"baremetal:inspection_rule:get", systemReader},
	"POST /v1/inspection_rules":                             {"baremetal:inspection_rule:create", systemAdmin},
	"PATCH /v1/inspection_rules/{ident}":                    {"baremetal:inspection_rule:update", systemAdmin},
	"DELETE /v1/inspection_rules/{ident}":                   {"baremetal:inspection_rule:delete", systemAdmin},
}

// publicRoutes are the routes no policy guards, with why: the agent's
// (Ironic's baremetal:driver:ipa_lookup, baremetal:node:ipa_heartbeat and
// baremetal:driver:ipa_continue_inspection are "is_public_api", checked
// by the agent token instead) and the version documents, which the
// authentication middleware never sees (chain). A route must be here or
// in a policy table (TestRBACEveryRouteHasPolicy).
var publicRoutes = map[string]string{
	"/v1/{$}":                      "the v1 version document (Ironic's is_public_api)",
	"GET /v1/lookup":               "the agent's lookup (baremetal:driver:ipa_lookup is is_public_api); the agent token guards what follows",
	"POST /v1/heartbeat/{node}":    "the agent's heartbeat (baremetal:node:ipa_heartbeat is is_public_api); the agent token guards it",
	"POST /v1/continue_inspection": "the agent's inspection data (baremetal:driver:ipa_continue_inspection is is_public_api)",
}

// policyMetrics guards /metrics, which Ironic's API does not serve
// (its metrics leave through a statsd or Prometheus exporter the
// operators run): the request rates and routes of every project are the
// system's to read.
var policyMetrics = policy{"rivet:metrics:get", systemReader}

// authorizeMetrics is policyMetrics before next; a request without a
// scope (no projects file) is unrestricted, as every route.
func authorizeMetrics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sc := scopeOf(r); sc != nil && !policyMetrics.allow(sc, "", "") {
			WriteFault(w, http.StatusForbidden, errForbidden(policyMetrics).Error())
			return
		}
		next.ServeHTTP(w, r)
	})
}

// projectAny is any project-scoped role (the node-level rules then decide).
func projectAny(sc *htpasswd.Scope, _, _ string) bool { return !sc.System() }

// projectRole is a project-scoped role of at least min, whatever the
// object (Ironic's bare "role:member").
func projectRole(min htpasswd.Role) rule {
	return func(sc *htpasswd.Scope, _, _ string) bool { return !sc.System() && sc.Role >= min }
}

// errForbidden is Ironic's HTTPForbidden.
func errForbidden(p policy) error {
	return errorf(http.StatusForbidden, "Access was denied to the following resource: %s", p.name)
}

// authorizeRoute checks a route that is not about one node before its
// handler runs. Node routes are checked where the node is loaded
// (authorizeNode); a route in neither table fails closed: it needs the
// system scope, reader for GET and member else.
func (s *server) authorizeRoute(r *http.Request) error {
	sc := scopeOf(r)
	if sc == nil {
		return nil
	}
	route := routeOf(r)
	if p, ok := globalPolicies[route]; ok {
		if !p.allow(sc, "", "") {
			return errForbidden(p)
		}
		return nil
	}
	if _, ok := nodePolicies[route]; ok {
		return nil
	}
	p := policySystemByDefault
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		p = policySystemReadByDflt
	}
	if !p.allow(sc, "", "") {
		return errForbidden(p)
	}
	return nil
}

// nodeRoutePolicy is the rule of the request's route for its node. A
// node route in no table fails closed: the system scope, reader for GET
// and member else, never a project (TestRBACEveryRouteHasPolicy keeps
// every served route in a table; this is the guard should one slip by).
func nodeRoutePolicy(r *http.Request) policy {
	if p, ok := nodePolicies[routeOf(r)]; ok {
		return p
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return policySystemReadByDflt
	}
	return policySystemByDefault
}

// canSee reports whether the request may know the node exists.
func canSee(sc *htpasswd.Scope, n *objects.Node) bool {
	return sc == nil || policyNodeGet.allow(sc, strOf(n.Owner), strOf(n.Lessee))
}

// authorizeNode applies the route's rule to n: hidden is what a node the
// request may not see answers (not found), then 403 naming the policy.
func (s *server) authorizeNode(r *http.Request, n *objects.Node, hidden error) error {
	sc := scopeOf(r)
	if sc == nil {
		return nil
	}
	if !canSee(sc, n) {
		return hidden
	}
	return checkPolicy(sc, n, nodeRoutePolicy(r))
}

// checkPolicy is p on n for sc: nil or 403.
func checkPolicy(sc *htpasswd.Scope, n *objects.Node, p policy) error {
	if sc == nil || p.allow(sc, strOf(n.Owner), strOf(n.Lessee)) {
		return nil
	}
	return errForbidden(p)
}

func strOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// authorizeByNodeID is authorizeNode for a port's or portgroup's node.
func (s *server) authorizeByNodeID(r *http.Request, nodeID int64, hidden error) error {
	if scopeOf(r) == nil {
		return nil
	}
	n, err := s.nodeByID(r.Context(), nodeID)
	if err != nil {
		if isNotFound(err) {
			return hidden
		}
		return err
	}
	return s.authorizeNode(r, n, hidden)
}

// projectNodes narrows a node query to the nodes a project-scoped
// request may see (its project owns or leases them); nil when
// unrestricted or system-scoped.
func projectNodes(r *http.Request) func(*bun.SelectQuery) *bun.SelectQuery {
	sc := scopeOf(r)
	if sc == nil || sc.System() {
		return nil
	}
	p := sc.Project
	return func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("?TableAlias.owner = ?", p).WhereOr("?TableAlias.lessee = ?", p)
		})
	}
}

// projectChildren narrows a port or portgroup query to those of nodes the
// request may see.
func projectChildren(r *http.Request) func(*bun.SelectQuery) *bun.SelectQuery {
	sc := scopeOf(r)
	if sc == nil || sc.System() {
		return nil
	}
	p := sc.Project
	return func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.node_id IN (SELECT id FROM nodes WHERE owner = ? OR lessee = ?)", p, p)
	}
}

// Ironic's redaction texts for what only the owner (or the system) reads.
const (
	redactedLastError   = "** Value Redacted - Requires baremetal:node:get:last_error permission. **"
	redactedReservation = "** Redacted - requires baremetal:node:get:reservation permission. **"
	redactedDII         = "** Redacted - Requires baremetal:node:get:driver_internal_info permission. **"
	redactedDriverInfo  = "** Redacted - requires baremetal:node:get:driver_info permission. **"
)

// redactNodeView hides from a project-scoped reader that is not the
// node's owner (a lessee) what Ironic's baremetal:node:get:last_error,
// :reservation, :driver_internal_info and :driver_info keep for the
// system and the owner.
func redactNodeView(r *http.Request, n *objects.Node, view map[string]any) {
	if !nodeRedacted(r, n) {
		return
	}
	for k := range view {
		if v, ok := redactedNodeField(k); ok {
			view[k] = v
		}
	}
}

// nodeRedacted reports whether redactNodeView hides fields of n from r's
// reader.
func nodeRedacted(r *http.Request, n *objects.Node) bool {
	sc := scopeOf(r)
	return sc != nil && !policyFilterThreshold(sc, "", "") && !systemOrOwnerReader(sc, strOf(n.Owner), strOf(n.Lessee))
}

// redactedNodeField is what a redacted node's view shows in field k
// instead of its value; false for the fields it shows as they are.
func redactedNodeField(k string) (any, bool) {
	switch k {
	case "last_error":
		return redactedLastError, true
	case "reservation":
		return redactedReservation, true
	case "driver_internal_info":
		return map[string]any{"content": redactedDII}, true
	case "driver_info":
		return map[string]any{"content": redactedDriverInfo}, true
	}
	return nil, false
}

// nodePatchPolicies are Ironic's per-path rules of a node PATCH
// (_authorize_patch_and_get_node), by the path's first segment.
var nodePatchPolicies = map[string]policy{
	"instance_info":     {"baremetal:node:update_instance_info", systemOrOwnerMemberLesseeAdmn},
	"extra":             {"baremetal:node:update_extra", systemOrProjectMember},
	"driver_info":       {"baremetal:node:update:driver_info", systemMemberOrOwnerMember},
	"properties":        {"baremetal:node:update:properties", systemMemberOrOwnerMember},
	"chassis_uuid":      {"baremetal:node:update:chassis_uuid", systemAdmin},
	"instance_uuid":     {"baremetal:node:update:instance_uuid", systemMemberOrOwnerMember},
	"lessee":            {"baremetal:node:update:lessee", systemMemberOrOwnerMember},
	"owner":             {"baremetal:node:update:owner", systemMember},
	"driver":            {"baremetal:node:update:driver_interfaces", systemMemberOrOwnerAdmin},
	"network_data":      {"baremetal:node:update:network_data", systemMemberOrOwnerMember},
	"name":              {"baremetal:node:update:name", systemMemberOrOwnerMember},
	"conductor_group":   {"baremetal:node:update:conductor_group", systemMember},
	"instance_name":     {"baremetal:node:update_instance_info", systemOrOwnerMemberLesseeAdmn},
	"retired":           {"baremetal:node:update:retired", systemMemberOrOwnerMember},
	"retired_reason":    {"baremetal:node:update:retired", systemMemberOrOwnerMember}, // Ironic matches "/retired" as a prefix
	"shard":             {"baremetal:node:update:shard", systemAdmin},
	"parent_node":       {"baremetal:node:update:parent_node", systemMember},
	"disable_power_off": {"baremetal:node:update:disable_power_off", systemAdmin},
}

// policyDisableCleaning is Ironic's rule for a PATCH setting
// automated_clean to false.
var policyDisableCleaning = policy{"baremetal:node:disable_cleaning", systemAdmin}

// authorizeNodePatch checks a PATCH's paths as Ironic does: each path's
// own rule, the *_interface fields baremetal:node:update:driver_interfaces,
// and baremetal:node:update for any other path (or none).
func authorizeNodePatch(r *http.Request, n *objects.Node, ops []patchOp) error {
	sc := scopeOf(r)
	if sc == nil {
		return nil
	}
	generic := len(ops) == 0
	for _, op := range ops {
		root := op.root()
		p, ok := nodePatchPolicies[root]
		if !ok && strings.HasSuffix(root, "_interface") {
			p, ok = nodePatchPolicies["driver"], true
		}
		if !ok && root == "automated_clean" && op.disablesCleaning() {
			p, ok = policyDisableCleaning, true
		}
		if !ok {
			generic = true
			continue
		}
		if err := checkPolicy(sc, n, p); err != nil {
			return err
		}
	}
	if generic {
		return checkPolicy(sc, n, policyNodeUpdate)
	}
	return nil
}

// policyOwnerProvisioned is Ironic's rule for changing the owner of an
// active node.
var policyOwnerProvisioned = policy{"baremetal:node:update_owner_provisioned", systemAdmin}

// authorizeOwnerProvisioned: a PATCH giving an active node an owner needs
// baremetal:node:update_owner_provisioned, and failing it is Ironic's 409
// (after the PATCH rules, with the other state checks).
func authorizeOwnerProvisioned(r *http.Request, n *objects.Node, ops []patchOp) error {
	sc := scopeOf(r)
	if sc == nil || n.ProvisionState != string(states.Active) {
		return nil
	}
	for _, op := range ops {
		if op.Path == "/owner" && op.Op != "remove" && checkPolicy(sc, n, policyOwnerProvisioned) != nil {
			return errorf(http.StatusConflict, "Cannot update owner of node \"%s\" while it is in state \"%s\". "+
				"Only a system admin (%s) may change it; unprovision the node first.", n.UUID, states.Active, policyOwnerProvisioned.name)
		}
	}
	return nil
}

// authorizeNodeCreate is Ironic's node create: a system admin creates any
// node; with project_admin_can_manage_own_nodes a project admin creates a
// node its project owns (an owner naming another project is 400); anyone
// else is 403.
func (s *server) authorizeNodeCreate(r *http.Request, n *objects.Node) error {
	sc := scopeOf(r)
	if sc == nil || systemAdmin(sc, "", "") {
		return nil
	}
	if !s.ProjectAdminManagesOwnNodes || sc.Role < htpasswd.Admin || sc.System() {
		return errForbidden(policyNodeCreate)
	}
	if n.Owner != nil && *n.Owner != sc.Project {
		return errorf(http.StatusBadRequest, "Cannot create a node as a project scoped admin with an owner other than your own project.")
	}
	// Pinned to a release whose nodes have no owner (0.2), the owner
	// would not be stored, and the node would be out of its creator's
	// sight from the start.
	if ov, ok := s.Pinner.Effective().ObjectVersion("Node"); ok && slices.Contains(s.unpinnedFields("Node", ov), "owner") {
		return errorf(http.StatusConflict, "Cannot create a project-owned node while the deployment is pinned to release %s, "+
			"whose nodes have no owner; retry once the upgrade is finished (pin_release_version removed).", s.Pinner.Effective().Label())
	}
	owner := sc.Project
	n.Owner = &owner
	return nil
}

// authorizeNodeDelete is Ironic's node delete: a system admin, or with
// project_admin_can_manage_own_nodes an admin of the owning project.
func (s *server) authorizeNodeDelete(r *http.Request, n *objects.Node) error {
	sc := scopeOf(r)
	if sc == nil || systemAdmin(sc, "", "") {
		return nil
	}
	if !s.ProjectAdminManagesOwnNodes {
		return errForbidden(policyNodeDelete)
	}
	return checkPolicy(sc, n, policyNodeDeleteOwned)
}

// disablesCleaning reports whether op sets a value Ironic's
// bool_from_string reads as false (a JSON false, or "false", "0", "no",
// "off", "f", "n" in any case), what baremetal:node:disable_cleaning
// guards.
func (op patchOp) disablesCleaning() bool {
	if op.Op == "remove" || len(op.Value) == 0 {
		return false
	}
	var v any
	if err := json.Unmarshal(op.Value, &v); err != nil {
		return false
	}
	switch x := v.(type) {
	case bool:
		return !x
	case string:
		return slices.Contains([]string{"0", "f", "false", "n", "no", "off"}, strings.ToLower(strings.TrimSpace(x)))
	case float64:
		return x == 0
	}
	return false
}
