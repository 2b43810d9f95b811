package api

import (
	"net/http"
	"slices"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
)

// rbacCase is one request of a user and what Ironic's default policies
// answer: the status, and for a 403 the policy named.
type rbacCase struct {
	user, method, path string
	body               any
	code               int
	policy             string
}

func runRBACCases(t *testing.T, e *rbacEnv, ver string, cases []rbacCase) {
	t.Helper()
	for _, tc := range cases {
		r := e.doAs(tc.user, tc.method, tc.path, ver, tc.body)
		if r.Code != tc.code {
			t.Errorf("%s %s %s: %d, want %d: %s", tc.user, tc.method, tc.path, r.Code, tc.code, r.Body)
			continue
		}
		if tc.policy != "" {
			if got, want := r.Fault(t), "Access was denied to the following resource: "+tc.policy; got != want {
				t.Errorf("%s %s %s: %q, want %q", tc.user, tc.method, tc.path, got, want)
			}
		}
	}
}

// TestRBACNewerResources: the resources after 1.49 take Ironic's default
// policies (common/policy.py): conductors, shards and deploy templates are
// the system's (readers read, admins write), events the system admin's;
// a node's inventory is its owner's (not its lessee's), its BIOS settings
// and traits the project's, traits written by the owner admin; and the
// node fields with their own PATCH rule are checked with it.
func TestRBACNewerResources(t *testing.T) {
	e := newRBACEnvAt(t, true, maxAPI03)
	a := "/v1/nodes/" + e.a
	patch := func(path string, v any) []map[string]any {
		return []map[string]any{{"op": "add", "path": path, "value": v}}
	}
	events := map[string]any{"events": []any{map[string]any{"event": "network.delete_port",
		"port_id": "11111111-2222-3333-4444-555555555555", "mac_address": "52:54:00:00:00:01",
		"status": "ACTIVE", "device_id": "22222222-2222-3333-4444-555555555555", "binding:host_id": nil,
		"binding:vnic_type": "baremetal"}}}
	runRBACCases(t, e, maxAPI03, []rbacCase{
		{"p1admin", "GET", "/v1/conductors", nil, 403, "baremetal:conductor:get"},
		{"p1admin", "GET", "/v1/conductors/host1", nil, 403, "baremetal:conductor:get"},
		{"sysread", "GET", "/v1/conductors", nil, 200, ""},
		{"p1admin", "GET", "/v1/shards", nil, 403, "baremetal:shards:get"},
		{"sysread", "GET", "/v1/shards", nil, 200, ""},
		{"p1admin", "POST", "/v1/events", events, 403, "baremetal:events:post"},
		{"sysmem", "POST", "/v1/events", events, 403, "baremetal:events:post"},
		{"root", "POST", "/v1/events", events, 204, ""},
		{"p1admin", "GET", "/v1/deploy_templates", nil, 403, "baremetal:deploy_template:get"},
		{"p1admin", "GET", "/v1/deploy_templates/CUSTOM_A", nil, 403, "baremetal:deploy_template:get"},
		{"sysread", "GET", "/v1/deploy_templates", nil, 200, ""},
		{"sysmem", "POST", "/v1/deploy_templates", templateBody("CUSTOM_A"), 403, "baremetal:deploy_template:create"},
		{"p1admin", "POST", "/v1/deploy_templates", templateBody("CUSTOM_A"), 403, "baremetal:deploy_template:create"},
		{"root", "POST", "/v1/deploy_templates", templateBody("CUSTOM_A"), 201, ""},
		{"sysmem", "PATCH", "/v1/deploy_templates/CUSTOM_A", patch("/extra/k", "v"), 403, "baremetal:deploy_template:update"},
		{"sysmem", "DELETE", "/v1/deploy_templates/CUSTOM_A", nil, 403, "baremetal:deploy_template:delete"},
		// inventory: SYSTEM_OR_OWNER_READER; the node has none, so passing
		// the policy is Ironic's 404 for the missing record.
		{"p2member", "GET", a + "/inventory", nil, 403, "baremetal:node:inventory:get"},
		{"p1reader", "GET", a + "/inventory", nil, 404, ""},
		{"p3member", "GET", "/v1/nodes/" + e.c + "/inventory", nil, 404, ""},
		// bios: SYSTEM_OR_PROJECT_READER.
		{"p2member", "GET", a + "/bios", nil, 200, ""},
		{"p3member", "GET", "/v1/nodes/" + e.c + "/bios", nil, 404, ""},
		// traits: read by the project, written by the owner admin.
		{"p2member", "GET", a + "/traits", nil, 200, ""},
		{"p1member", "PUT", a + "/traits/CUSTOM_X", nil, 403, "baremetal:node:traits:set"},
		{"p2admin", "PUT", a + "/traits/CUSTOM_X", nil, 403, "baremetal:node:traits:set"},
		{"p1admin", "PUT", a + "/traits/CUSTOM_X", nil, 204, ""},
		{"p1member", "DELETE", a + "/traits/CUSTOM_X", nil, 403, "baremetal:node:traits:delete"},
		{"p3member", "GET", "/v1/nodes/" + e.c + "/traits", nil, 404, ""},
		// history: the owner's.
		{"p2member", "GET", a + "/history", nil, 403, "baremetal:node:history:get"},
		{"p1reader", "GET", a + "/history", nil, 200, ""},
		// node PATCH rules of the fields after 1.80
		{"p2member", "PATCH", a, patch("/instance_name", "vm1"), 403, "baremetal:node:update_instance_info"},
		{"p2admin", "PATCH", a, patch("/instance_name", "vm1"), 200, ""},
		{"p1member", "PATCH", a, patch("/instance_name", "vm2"), 200, ""},
		{"p1admin", "PATCH", a, patch("/shard", "s1"), 403, "baremetal:node:update:shard"},
		{"sysmem", "PATCH", a, patch("/shard", "s1"), 403, "baremetal:node:update:shard"},
		{"root", "PATCH", a, patch("/shard", "s1"), 200, ""},
		{"p1admin", "PATCH", a, patch("/parent_node", e.c), 403, "baremetal:node:update:parent_node"},
		{"p1admin", "PATCH", a, patch("/disable_power_off", true), 403, "baremetal:node:update:disable_power_off"},
		{"p2member", "PATCH", a, patch("/retired_reason", "old"), 403, "baremetal:node:update:retired"},
		{"p1member", "PATCH", a, patch("/retired_reason", "old"), 200, ""},
		{"p1admin", "PATCH", a, patch("/automated_clean", false), 403, "baremetal:node:disable_cleaning"},
		{"p1admin", "PATCH", a, patch("/automated_clean", "off"), 403, "baremetal:node:disable_cleaning"},
		{"p1member", "PATCH", a, patch("/automated_clean", true), 200, ""},
		{"root", "PATCH", a, patch("/automated_clean", false), 200, ""},
	})
}

// Without a projects file every user is unrestricted, as before projects
// existed: the newer resources answer as to an admin.
func TestRBACNewerResourcesUnscoped(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := e.node(map[string]any{"owner": "p1"})
	e.must(http.StatusOK, "GET", "/v1/conductors", maxAPI03, nil)
	e.must(http.StatusOK, "GET", "/v1/shards", maxAPI03, nil)
	e.must(http.StatusCreated, "POST", "/v1/deploy_templates", maxAPI03, templateBody("CUSTOM_B"))
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, maxAPI03, []map[string]any{{"op": "add", "path": "/shard", "value": "s1"}})
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, maxAPI03, []map[string]any{{"op": "add", "path": "/automated_clean", "value": false}})
	e.must(http.StatusNotFound, "GET", "/v1/nodes/"+id+"/inventory", maxAPI03, nil)
}

// TestRBACVolume: volume connectors and targets follow their node, as
// Ironic's baremetal:volume:* rules: a project lists and reads those of
// the nodes it owns or leases (others are not found), creates and deletes
// them as the owner's or lessee's admin, updates them as the owner's
// member or lessee's admin; a target's properties are redacted but for
// admins and the system; /v1/volume itself is the system's.
func TestRBACVolume(t *testing.T) {
	e := newRBACEnvAt(t, true, maxAPI03)
	ver := maxAPI03
	setNode(t, e.env, e.a, func(n *objects.Node) { n.PowerState = ptr("power off") }) // volume updates need it
	conn := func(user, node, id string, code int) string {
		t.Helper()
		r := e.asMust(code, user, "POST", "/v1/volume/connectors", ver,
			map[string]any{"node_uuid": node, "type": "iqn", "connector_id": "iqn.2026-11.org.example:" + id})
		if code != http.StatusCreated {
			return r.Fault(t)
		}
		return r.JSON(t)["uuid"].(string)
	}
	connA, connC := conn("root", e.a, "a", 201), conn("root", e.c, "c", 201)
	targetA := e.asMust(201, "root", "POST", "/v1/volume/targets", ver, map[string]any{"node_uuid": e.a, "volume_type": "iscsi",
		"boot_index": 0, "volume_id": "vol-a", "properties": map[string]any{"target_lun": 0}}).JSON(t)["uuid"].(string)

	const denied = "Access was denied to the following resource: "
	for user, want := range map[string][]string{"p1reader": {connA}, "p2member": {connA}, "p3member": {}, "sysread": {connA, connC}, "root": {connA, connC}} {
		for _, path := range []string{"/v1/volume/connectors", "/v1/volume/connectors?detail=True"} {
			got := names(t, e.asMust(200, user, "GET", path, ver, nil), "connectors")
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s %s: %v, want %v", user, path, got, want)
			}
		}
	}
	if got := e.asMust(404, "p1reader", "GET", "/v1/volume/connectors/"+connC, ver, nil).Fault(t); got != "Volume connector "+connC+" could not be found." {
		t.Errorf("another project's connector: %q", got)
	}
	e.asMust(404, "p3member", "GET", "/v1/nodes/"+e.a+"/volume/connectors", ver, nil)
	if l := e.asMust(200, "p2member", "GET", "/v1/nodes/"+e.a+"/volume/connectors", ver, nil).JSON(t)["connectors"].([]any); len(l) != 1 {
		t.Errorf("lessee's node connectors: %v", l)
	}
	// Target properties: admins and the system read them.
	for user, redacted := range map[string]bool{"p1reader": true, "p2member": true, "p1admin": false, "p2admin": false, "sysread": false, "root": false} {
		props := e.asMust(200, user, "GET", "/v1/volume/targets/"+targetA, ver, nil).JSON(t)["properties"].(map[string]any)
		if _, isRedacted := props["redacted_contents"]; isRedacted != redacted {
			t.Errorf("%s reads target properties %v", user, props)
		}
	}
	detail := e.asMust(200, "p1member", "GET", "/v1/volume/targets?detail=True", ver, nil).JSON(t)["targets"].([]any)
	if len(detail) != 1 || detail[0].(map[string]any)["properties"].(map[string]any)["redacted_contents"] == nil {
		t.Errorf("member's target list: %v", detail)
	}
	runRBACCases(t, e, ver, []rbacCase{
		{"p1admin", "GET", "/v1/volume", nil, 403, "baremetal:volume:get"},
		{"p1admin", "GET", "/v1/nodes/" + e.a + "/volume", nil, 403, "baremetal:volume:get"},
		{"sysread", "GET", "/v1/volume", nil, 200, ""},
		{"p1member", "POST", "/v1/volume/connectors", map[string]any{"node_uuid": e.a, "type": "iqn", "connector_id": "iqn.x:m"}, 403, "baremetal:volume:create"},
		{"p3member", "POST", "/v1/volume/connectors", map[string]any{"node_uuid": e.c, "type": "iqn", "connector_id": "iqn.x:c"}, 403, "baremetal:volume:create"},
		{"p1admin", "POST", "/v1/volume/connectors", map[string]any{"node_uuid": "8c1e6d36-62a4-4d0c-9b1a-0f2c7c3bd1aa", "type": "iqn", "connector_id": "iqn.x:n"}, 403, "baremetal:volume:create"},
		{"sysread", "POST", "/v1/volume/connectors", map[string]any{"node_uuid": e.a, "type": "iqn", "connector_id": "iqn.x:s"}, 403, "baremetal:volume:create"},
		{"p2member", "PATCH", "/v1/volume/connectors/" + connA, patchOp1("add", "/extra/k", "v"), 403, "baremetal:volume:update"},
		{"p1member", "PATCH", "/v1/volume/connectors/" + connA, patchOp1("add", "/extra/k", "v"), 200, ""},
		{"p2admin", "PATCH", "/v1/volume/connectors/" + connA, patchOp1("add", "/extra/k2", "v"), 200, ""},
		{"p1member", "PATCH", "/v1/volume/connectors/" + connC, patchOp1("add", "/extra/k", "v"), 404, ""},
		{"p1member", "DELETE", "/v1/volume/connectors/" + connA, nil, 403, "baremetal:volume:delete"},
		{"p1member", "DELETE", "/v1/volume/targets/" + targetA, nil, 403, "baremetal:volume:delete"},
		{"p1admin", "DELETE", "/v1/volume/connectors/" + connC, nil, 404, ""},
	})
	if got := conn("p2admin", e.a, "lessee", 201); got == "" {
		t.Error("lessee admin could not create a connector")
	}
	e.asMust(204, "p1admin", "DELETE", "/v1/volume/connectors/"+connA, ver, nil)
	if got := conn("p1member", e.a, "m2", 403); got != denied+"baremetal:volume:create" {
		t.Errorf("member create: %q", got)
	}
}

// TestRBACRunbooks: runbooks take Ironic's baremetal:runbook:* rules over
// their owner: a project lists and reads its own and the public ones
// (another project's private one is 403: Ironic does not conceal them), a
// project admin (Keystone's admin implies manager) creates private
// runbooks its project owns and updates or deletes them; owner and public
// are the system member's to change.
func TestRBACRunbooks(t *testing.T) {
	e := newRBACEnvAt(t, true, maxAPI03)
	ver := maxAPI03
	mk := func(user, name string, extra map[string]any, code int) resp {
		t.Helper()
		body := runbookBody(name)
		for k, v := range extra {
			body[k] = v
		}
		return e.asMust(code, user, "POST", "/v1/runbooks", ver, body)
	}
	mk("root", "CUSTOM_P9", map[string]any{"owner": "p9"}, 201)
	mk("root", "CUSTOM_PUBLIC", map[string]any{"public": true}, 201)
	mk("root", "CUSTOM_SYSTEM", nil, 201)
	own := mk("p1admin", "CUSTOM_P1", nil, 201).JSON(t)
	if own["owner"] != "p1" || own["public"] != false {
		t.Errorf("project admin's runbook: owner %v public %v", own["owner"], own["public"])
	}
	for user, want := range map[string][]string{
		"p1reader": {"CUSTOM_P1", "CUSTOM_PUBLIC"}, "p2member": {"CUSTOM_PUBLIC"},
		"sysread": {"CUSTOM_P1", "CUSTOM_P9", "CUSTOM_PUBLIC", "CUSTOM_SYSTEM"},
	} {
		got := names(t, e.asMust(200, user, "GET", "/v1/runbooks", ver, nil), "runbooks")
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s lists %v, want %v", user, got, want)
		}
	}
	if got := mk("p1admin", "CUSTOM_X", map[string]any{"owner": "p9"}, 400).Fault(t); got != "Cannot create a runbook as a project scoped admin with an owner other than your own project." {
		t.Errorf("another owner: %q", got)
	}
	if got := mk("p1admin", "CUSTOM_X", map[string]any{"public": true}, 400).Fault(t); got != "Cannot create a public runbook as a project scoped admin." {
		t.Errorf("public: %q", got)
	}
	runRBACCases(t, e, ver, []rbacCase{
		{"p1member", "POST", "/v1/runbooks", runbookBody("CUSTOM_M"), 403, "baremetal:runbook:create"},
		{"sysread", "POST", "/v1/runbooks", runbookBody("CUSTOM_M"), 403, "baremetal:runbook:create"},
		{"sysmem", "POST", "/v1/runbooks", runbookBody("CUSTOM_SYSMEM"), 201, ""},
		{"p1reader", "GET", "/v1/runbooks/CUSTOM_P1", nil, 200, ""},
		{"p2member", "GET", "/v1/runbooks/CUSTOM_PUBLIC", nil, 200, ""},
		{"p2member", "GET", "/v1/runbooks/CUSTOM_P1", nil, 403, "baremetal:runbook:get"},
		{"p1reader", "GET", "/v1/runbooks/CUSTOM_SYSTEM", nil, 403, "baremetal:runbook:get"},
		{"p1member", "PATCH", "/v1/runbooks/CUSTOM_P1", patchOp1("add", "/extra/k", "v"), 403, "baremetal:runbook:update"},
		{"p1admin", "PATCH", "/v1/runbooks/CUSTOM_P1", patchOp1("add", "/extra/k", "v"), 200, ""},
		{"p1admin", "PATCH", "/v1/runbooks/CUSTOM_PUBLIC", patchOp1("add", "/extra/k", "v"), 403, "baremetal:runbook:update"},
		{"p1admin", "PATCH", "/v1/runbooks/CUSTOM_P1", patchOp1("replace", "/public", true), 403, "baremetal:runbook:update:public"},
		{"p1admin", "PATCH", "/v1/runbooks/CUSTOM_P1", patchOp1("replace", "/owner", "p2"), 403, "baremetal:runbook:update:owner"},
		{"sysmem", "PATCH", "/v1/runbooks/CUSTOM_P9", patchOp1("replace", "/owner", "p1"), 200, ""},
		{"p1member", "DELETE", "/v1/runbooks/CUSTOM_P1", nil, 403, "baremetal:runbook:delete"},
		{"p2admin", "DELETE", "/v1/runbooks/CUSTOM_P9", nil, 403, "baremetal:runbook:delete"},
		{"p1admin", "DELETE", "/v1/runbooks/CUSTOM_P9", nil, 204, ""}, // p1's since the system member gave it
		{"p1admin", "DELETE", "/v1/runbooks/CUSTOM_P1", nil, 204, ""},
	})
}
