package api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/htpasswd"
	"github.com/rivetmetal/rivet/core/release"
)

// anyPassword accepts every user with the password "pw" (no bcrypt: the
// RBAC tests make hundreds of requests).
type anyPassword struct{}

func (anyPassword) Check(_, pw string) bool { return pw == "pw" }

type scopes map[string]htpasswd.Scope

func (s scopes) Scope(user string) (htpasswd.Scope, bool) { sc, ok := s[user]; return sc, ok }

// rbacUsers: root is not listed (system admin, as every user without a
// projects file); p1 owns node A, p2 leases it; p9 owns B; C has neither.
var rbacUsers = scopes{
	"sysadmin": {Project: "", Role: htpasswd.Admin},
	"sysread":  {Project: "", Role: htpasswd.Reader},
	"sysmem":   {Project: "", Role: htpasswd.Member},
	"p1admin":  {Project: "p1", Role: htpasswd.Admin},
	"p1member": {Project: "p1", Role: htpasswd.Member},
	"p1reader": {Project: "p1", Role: htpasswd.Reader},
	"p2admin":  {Project: "p2", Role: htpasswd.Admin},
	"p2member": {Project: "p2", Role: htpasswd.Member},
	"p3member": {Project: "p3", Role: htpasswd.Member},
}

func (e *env) asMust(code int, user, method, path, ver string, body any) resp {
	e.t.Helper()
	r := e.doAs(user, method, path, ver, body)
	if r.Code != code {
		e.t.Fatalf("%s: %s %s @%s: status %d, want %d; body %s", user, method, path, ver, r.Code, code, r.Body)
	}
	return r
}

// rbacEnv has users with projects and nodes A (owner p1, lessee p2), B
// (owner p9) and C (neither), each with a port.
type rbacEnv struct {
	*env
	a, b, c      string
	portA, portC string
}

func newRBACEnv(t *testing.T, selfService bool) *rbacEnv {
	return newRBACEnvAt(t, selfService, "1.80")
}

// newRBACEnvAt is newRBACEnv serving API versions up to maxAPI.
func newRBACEnvAt(t *testing.T, selfService bool, maxAPI string) *rbacEnv {
	e := newEnv(t, withMaxAPI(maxAPI), func(d *Deps) {
		d.Auth, d.Projects, d.ProjectAdminManagesOwnNodes = anyPassword{}, rbacUsers, selfService
	})
	re := &rbacEnv{env: e}
	mk := func(body map[string]any) string {
		body["driver"] = "fake-hardware"
		return e.asMust(http.StatusCreated, "root", "POST", "/v1/nodes", "1.80", body).JSON(t)["uuid"].(string)
	}
	re.a = mk(map[string]any{"name": "a", "owner": "p1", "lessee": "p2", "driver_info": map[string]any{"ipmi_address": "10.0.0.1"}})
	re.b = mk(map[string]any{"name": "b", "owner": "p9"})
	re.c = mk(map[string]any{"name": "c"})
	port := func(node, mac string) string {
		return e.asMust(http.StatusCreated, "root", "POST", "/v1/ports", "1.80", map[string]any{"node_uuid": node, "address": mac}).JSON(t)["uuid"].(string)
	}
	re.portA, re.portC = port(re.a, "52:54:00:00:00:0a"), port(re.c, "52:54:00:00:00:0c")
	n, err := e.store.GetNode(context.Background(), re.a)
	if err != nil {
		t.Fatal(err)
	}
	n.LastError = ptr("BMC bmc-a.internal refused")
	if err := e.store.Save(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	return re
}

func ptr[T any](v T) *T { return &v }

func names(t *testing.T, r resp, key string) []string {
	t.Helper()
	out := []string{}
	for _, it := range r.JSON(t)[key].([]any) {
		m := it.(map[string]any)
		if n, ok := m["name"].(string); ok {
			out = append(out, n)
		} else {
			out = append(out, m["uuid"].(string))
		}
	}
	return out
}

// A project-scoped user lists only the nodes its project owns or leases;
// the system scope and unlisted users list all.
func TestRBACNodeListScoped(t *testing.T) {
	e := newRBACEnv(t, true)
	for user, want := range map[string][]string{
		"root": {"a", "b", "c"}, "sysread": {"a", "b", "c"},
		"p1reader": {"a"}, "p2member": {"a"}, "p3member": {},
	} {
		for _, path := range []string{"/v1/nodes", "/v1/nodes/detail", "/v1/nodes?fields=name,uuid"} {
			if d := cmp.Diff(want, names(t, e.asMust(200, user, "GET", path, "1.80", nil), "nodes")); d != "" {
				t.Errorf("%s %s (-want +got):\n%s", user, path, d)
			}
		}
	}
	// Filters narrow within the scope.
	if got := names(t, e.asMust(200, "p1reader", "GET", "/v1/nodes?owner=p9", "1.80", nil), "nodes"); len(got) != 0 {
		t.Errorf("p1reader ?owner=p9: %v", got)
	}
}

// Nodes outside the scope are not found (never forbidden), through
// every path that names them; ports and portgroups follow their node.
func TestRBACOutsideScopeIsNotFound(t *testing.T) {
	e := newRBACEnv(t, true)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/v1/nodes/" + e.c}, {"GET", "/v1/nodes/c"}, {"PATCH", "/v1/nodes/" + e.b},
		{"DELETE", "/v1/nodes/" + e.b}, {"PUT", "/v1/nodes/" + e.c + "/states/power"},
		{"GET", "/v1/nodes/" + e.c + "/states"}, {"GET", "/v1/nodes/" + e.c + "/ports"},
		{"GET", "/v1/nodes/" + e.c + "/history"}, {"GET", "/v1/nodes/" + e.c + "/vifs"},
		{"GET", "/v1/ports?node=" + e.c},
	} {
		r := e.asMust(http.StatusNotFound, "p1member", tc.method, tc.path, "1.80",
			map[string]any{"target": "power on"})
		if !strings.Contains(r.Fault(t), "could not be found") {
			t.Errorf("%s %s: %q", tc.method, tc.path, r.Fault(t))
		}
	}
	r := e.asMust(http.StatusNotFound, "p1reader", "GET", "/v1/ports/"+e.portC, "1.80", nil)
	if got := r.Fault(t); got != "Port "+e.portC+" could not be found." {
		t.Errorf("port of another project: %q", got)
	}
	if d := cmp.Diff([]string{e.portA}, names(t, e.asMust(200, "p2member", "GET", "/v1/ports", "1.80", nil), "ports")); d != "" {
		t.Errorf("ports listed to the lessee (-want +got):\n%s", d)
	}
	// A port created on a node out of sight is a body reference not found.
	e.asMust(http.StatusBadRequest, "p1admin", "POST", "/v1/ports", "1.80", map[string]any{"node_uuid": e.c, "address": "52:54:00:00:00:99"})
}

// Within the scope, each action takes Ironic's rule: readers cannot write,
// lessees have fewer rights than owners, and a denial is 403 naming the
// policy.
func TestRBACRolesOnVisibleNode(t *testing.T) {
	e := newRBACEnv(t, true)
	patch := func(path string, v any) []map[string]any {
		return []map[string]any{{"op": "add", "path": path, "value": v}}
	}
	for _, tc := range []struct {
		user, method, path string
		body               any
		code               int
		policy             string
	}{
		{"p1reader", "GET", "/v1/nodes/" + e.a, nil, 200, ""},
		{"p1reader", "PATCH", "/v1/nodes/" + e.a, patch("/extra/k", "v"), 403, "baremetal:node:update_extra"},
		{"p1member", "PATCH", "/v1/nodes/" + e.a, patch("/extra/k", "v"), 200, ""},
		{"p2member", "PATCH", "/v1/nodes/" + e.a, patch("/extra/k2", "v"), 200, ""},
		{"p2member", "PATCH", "/v1/nodes/" + e.a, patch("/driver_info/x", "y"), 403, "baremetal:node:update:driver_info"},
		{"p1member", "PATCH", "/v1/nodes/" + e.a, patch("/driver_info/x", "y"), 200, ""},
		{"p1member", "PATCH", "/v1/nodes/" + e.a, patch("/owner", "p2"), 403, "baremetal:node:update:owner"},
		{"p1member", "PATCH", "/v1/nodes/" + e.a, patch("/lessee", "p3"), 200, ""},
		{"p1member", "PATCH", "/v1/nodes/" + e.a, patch("/lessee", "p2"), 200, ""},
		{"p1member", "PATCH", "/v1/nodes/" + e.a, patch("/deploy_interface", "fake"), 403, "baremetal:node:update:driver_interfaces"},
		{"p1member", "PATCH", "/v1/nodes/" + e.a, patch("/maintenance", true), 200, ""},
		{"sysread", "PATCH", "/v1/nodes/" + e.a, patch("/extra/k", "v"), 403, "baremetal:node:update_extra"},
		{"sysmem", "PATCH", "/v1/nodes/" + e.a, patch("/owner", "p1"), 200, ""},
		{"p2member", "PUT", "/v1/nodes/" + e.a + "/states/power", map[string]any{"target": "power on"}, 202, ""},
		{"p1reader", "PUT", "/v1/nodes/" + e.a + "/states/power", map[string]any{"target": "power on"}, 403, "baremetal:node:set_power_state"},
		{"p2member", "PUT", "/v1/nodes/" + e.a + "/states/provision", map[string]any{"target": "manage"}, 403, "baremetal:node:set_provision_state"},
		{"p2admin", "PUT", "/v1/nodes/" + e.a + "/states/provision", map[string]any{"target": "manage"}, 202, ""},
		{"p2admin", "PUT", "/v1/nodes/" + e.a + "/management/boot_device", map[string]any{"boot_device": "pxe"}, 403, "baremetal:node:set_boot_device"},
		{"p1admin", "PUT", "/v1/nodes/" + e.a + "/management/boot_device", map[string]any{"boot_device": "pxe"}, 204, ""},
		{"p1member", "GET", "/v1/nodes/" + e.a + "/vendor_passthru/methods", nil, 403, "baremetal:node:vendor_passthru"},
		{"p2member", "GET", "/v1/nodes/" + e.a + "/history", nil, 403, "baremetal:node:history:get"},
		{"p1reader", "GET", "/v1/nodes/" + e.a + "/history", nil, 200, ""},
		{"p1reader", "GET", "/v1/nodes/" + e.a + "/ports", nil, 200, ""},
		{"p1member", "PATCH", "/v1/ports/" + e.portA, patch("/extra/k", "v"), 403, "baremetal:port:update"},
		{"p1admin", "PATCH", "/v1/ports/" + e.portA, patch("/extra/k", "v"), 200, ""},
		{"p2admin", "DELETE", "/v1/ports/" + e.portA, nil, 403, "baremetal:port:delete"},
		{"p1member", "POST", "/v1/ports", map[string]any{"node_uuid": e.a, "address": "52:54:00:00:00:1a"}, 403, "baremetal:port:create"},
		{"p1admin", "POST", "/v1/ports", map[string]any{"node_uuid": e.a, "address": "52:54:00:00:00:1a"}, 201, ""},
		{"p1member", "POST", "/v1/portgroups", map[string]any{"node_uuid": e.a, "name": "bond-a"}, 403, "baremetal:portgroup:create"},
		{"p1admin", "POST", "/v1/portgroups", map[string]any{"node_uuid": e.a, "name": "bond-a"}, 201, ""},
		{"p2member", "GET", "/v1/portgroups/bond-a", nil, 200, ""},
		{"p3member", "GET", "/v1/portgroups/bond-a", nil, 404, ""},
		{"p2admin", "PATCH", "/v1/portgroups/bond-a", patch("/extra/k", "v"), 403, "baremetal:portgroup:update"},
		{"p1admin", "GET", "/v1/chassis", nil, 403, "baremetal:chassis:get"},
		{"sysread", "GET", "/v1/chassis", nil, 200, ""},
		{"p1admin", "GET", "/v1/drivers", nil, 403, "baremetal:driver:get"},
		{"sysread", "POST", "/v1/chassis", map[string]any{}, 403, "baremetal:chassis:create"},
	} {
		r := e.doAs(tc.user, tc.method, tc.path, "1.80", tc.body)
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
	for user, want := range map[string][]string{"p2member": {"bond-a"}, "p3member": {}, "sysread": {"bond-a"}} {
		if d := cmp.Diff(want, names(t, e.asMust(200, user, "GET", "/v1/portgroups", "1.80", nil), "portgroups")); d != "" {
			t.Errorf("%s lists portgroups (-want +got):\n%s", user, d)
		}
	}
}

// A lessee (and any project user not the owner) reads the node with
// last_error, reservation, driver_info and driver_internal_info redacted,
// with Ironic's texts; the owner and the system see them.
func TestRBACLesseeRedaction(t *testing.T) {
	e := newRBACEnv(t, true)
	lessee := e.asMust(200, "p2member", "GET", "/v1/nodes/"+e.a, "1.80", nil).JSON(t)
	if lessee["last_error"] != redactedLastError || lessee["reservation"] != redactedReservation {
		t.Errorf("lessee sees last_error %v, reservation %v", lessee["last_error"], lessee["reservation"])
	}
	if d := cmp.Diff(map[string]any{"content": redactedDriverInfo}, lessee["driver_info"]); d != "" {
		t.Errorf("lessee driver_info (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"content": redactedDII}, lessee["driver_internal_info"]); d != "" {
		t.Errorf("lessee driver_internal_info (-want +got):\n%s", d)
	}
	detail := e.asMust(200, "p2member", "GET", "/v1/nodes/detail", "1.80", nil).JSON(t)["nodes"].([]any)[0].(map[string]any)
	if detail["last_error"] != redactedLastError {
		t.Errorf("lessee detail list last_error %v", detail["last_error"])
	}
	for _, user := range []string{"p1reader", "sysread", "root"} {
		n := e.asMust(200, user, "GET", "/v1/nodes/"+e.a, "1.80", nil).JSON(t)
		if n["last_error"] != "BMC bmc-a.internal refused" || n["driver_info"].(map[string]any)["ipmi_address"] != "10.0.0.1" {
			t.Errorf("%s: last_error %v, driver_info %v", user, n["last_error"], n["driver_info"])
		}
	}
}

// Self-service (1.80's marker, [api] project_admin_can_manage_own_nodes):
// a project admin creates nodes its project owns and deletes them; a
// member cannot, nor can a lessee's admin; with the option off, only the
// system admin creates and deletes.
func TestRBACSelfServiceNodes(t *testing.T) {
	e := newRBACEnv(t, true)
	r := e.asMust(http.StatusForbidden, "p1member", "POST", "/v1/nodes", "1.80", map[string]any{"driver": "fake-hardware"})
	if got := r.Fault(t); got != "Access was denied to the following resource: baremetal:node:create" {
		t.Errorf("member create: %q", got)
	}
	r = e.asMust(http.StatusBadRequest, "p1admin", "POST", "/v1/nodes", "1.80", map[string]any{"driver": "fake-hardware", "owner": "p2"})
	if got := r.Fault(t); got != "Cannot create a node as a project scoped admin with an owner other than your own project." {
		t.Errorf("create for another owner: %q", got)
	}
	own := e.asMust(http.StatusCreated, "p1admin", "POST", "/v1/nodes", "1.80", map[string]any{"driver": "fake-hardware"}).JSON(t)
	if own["owner"] != "p1" {
		t.Fatalf("self-service node owner %v", own["owner"])
	}
	id := own["uuid"].(string)
	e.asMust(http.StatusForbidden, "p1member", "DELETE", "/v1/nodes/"+id, "1.80", nil)
	e.asMust(http.StatusForbidden, "p2admin", "DELETE", "/v1/nodes/"+e.a, "1.80", nil)
	r = e.asMust(http.StatusForbidden, "sysmem", "DELETE", "/v1/nodes/"+id, "1.80", nil)
	if got := r.Fault(t); got != "Access was denied to the following resource: baremetal:node:delete:self_owned_node" {
		t.Errorf("system member delete: %q", got)
	}
	e.asMust(http.StatusNoContent, "p1admin", "DELETE", "/v1/nodes/"+id, "1.80", nil)

	off := newRBACEnv(t, false)
	off.asMust(http.StatusForbidden, "p1admin", "POST", "/v1/nodes", "1.80", map[string]any{"driver": "fake-hardware"})
	r = off.asMust(http.StatusForbidden, "p1admin", "DELETE", "/v1/nodes/"+off.a, "1.80", nil)
	if got := r.Fault(t); got != "Access was denied to the following resource: baremetal:node:delete" {
		t.Errorf("delete with self-service off: %q", got)
	}
	off.asMust(http.StatusNoContent, "root", "DELETE", "/v1/nodes/"+off.c, "1.80", nil)
}

// Without a projects file every authenticated user is unrestricted, as
// before: the same users see and change everything.
func TestRBACWithoutProjectsIsUnrestricted(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.80"), func(d *Deps) { d.Auth = anyPassword{} })
	e.asMust(http.StatusCreated, "p1reader", "POST", "/v1/nodes", "1.80", map[string]any{"driver": "fake-hardware", "owner": "p9", "name": "x"})
	if got := names(t, e.asMust(200, "p3member", "GET", "/v1/nodes", "1.80", nil), "nodes"); len(got) != 1 {
		t.Fatalf("nodes %v", got)
	}
	e.asMust(http.StatusOK, "p3member", "PATCH", "/v1/nodes/x", "1.80", []map[string]any{{"op": "add", "path": "/owner", "value": "p3"}})
	e.asMust(http.StatusOK, "p3member", "GET", "/v1/chassis", "1.80", nil)
	e.asMust(http.StatusNoContent, "p3member", "DELETE", "/v1/nodes/x", "1.80", nil)
}

// TestV1_71ScopedRoles: 1.71 is Ironic's signifier that scope-based roles
// are enforced; it changes no request or response, and Ironic enforces
// them at every version. So here: 1.71 is served, and a project-scoped
// reader gets the same scoped answers at 1.70 and at 1.71.
func TestV1_71ScopedRoles(t *testing.T) {
	e := newRBACEnv(t, true)
	for _, ver := range []string{"1.70", "1.71"} {
		r := e.asMust(200, "p1reader", "GET", "/v1/nodes", ver, nil)
		if r.Header.Get(HeaderVersion) != ver {
			t.Errorf("served %q, want %s", r.Header.Get(HeaderVersion), ver)
		}
		if d := cmp.Diff([]string{"a"}, names(t, r, "nodes")); d != "" {
			t.Errorf("@%s (-want +got):\n%s", ver, d)
		}
		e.asMust(http.StatusNotFound, "p1reader", "GET", "/v1/nodes/"+e.c, ver, nil)
		e.asMust(http.StatusForbidden, "p1reader", "PATCH", "/v1/nodes/"+e.a, ver, []map[string]any{{"op": "add", "path": "/extra/k", "value": "v"}})
	}
}

// TestV1_80SelfServiceNodes: 1.80 is Ironic's marker that project admins
// may create and delete their own nodes (project_admin_can_manage_own_nodes);
// no request or response changes, and the policy is not version-gated. So
// 1.80 is served, and self-service works at 1.79 and 1.80 alike.
func TestV1_80SelfServiceNodes(t *testing.T) {
	e := newRBACEnv(t, true)
	for _, ver := range []string{"1.79", "1.80"} {
		r := e.asMust(http.StatusCreated, "p1admin", "POST", "/v1/nodes", ver, map[string]any{"driver": "fake-hardware"})
		if r.Header.Get(HeaderVersion) != ver || r.JSON(t)["owner"] != "p1" {
			t.Fatalf("@%s: served %q, owner %v", ver, r.Header.Get(HeaderVersion), r.JSON(t)["owner"])
		}
		e.asMust(http.StatusNoContent, "p1admin", "DELETE", "/v1/nodes/"+r.JSON(t)["uuid"].(string), ver, nil)
	}
}

// Pinned to 0.2, whose nodes cannot hold an owner, a self-service create
// is refused (the node would be out of its creator's sight at once); the
// system admin still creates nodes.
func TestRBACSelfServiceWhilePinned(t *testing.T) {
	pin, err := release.Default().ParsePin("0.2")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvPinned(t, release.NewPinner(release.Default(), pin), func(d *Deps) {
		d.Auth, d.Projects, d.ProjectAdminManagesOwnNodes = anyPassword{}, rbacUsers, true
	})
	r := e.asMust(http.StatusConflict, "p1admin", "POST", "/v1/nodes", "1.31", map[string]any{"driver": "fake-hardware"})
	if got := r.Fault(t); !strings.Contains(got, "pinned to release 0.2") {
		t.Errorf("fault %q", got)
	}
	e.asMust(http.StatusCreated, "root", "POST", "/v1/nodes", "1.31", map[string]any{"driver": "fake-hardware"})
}

// The http_basic user travels with the RPCs a request makes, for the
// conductors' node history (its user field).
func TestUserReachesTheConductor(t *testing.T) {
	e := newRBACEnv(t, true)
	e.asMust(http.StatusAccepted, "p2member", "PUT", "/v1/nodes/"+e.a+"/states/power", "1.80", map[string]any{"target": "power on"})
	e.cond.mu.Lock()
	defer e.cond.mu.Unlock()
	if e.cond.powerUser != "p2member" {
		t.Fatalf("the conductor got user %q", e.cond.powerUser)
	}
}

// Node traits (1.37) follow Ironic's rules: project readers list them,
// only the owner's admin (or the system) changes them.
func TestRBACNodeTraits(t *testing.T) {
	e := newRBACEnv(t, true)
	e.asMust(http.StatusOK, "p2member", "GET", "/v1/nodes/"+e.a+"/traits", "1.80", nil)
	r := e.asMust(http.StatusForbidden, "p1member", "PUT", "/v1/nodes/"+e.a+"/traits/CUSTOM_X", "1.80", nil)
	if got := r.Fault(t); got != "Access was denied to the following resource: baremetal:node:traits:set" {
		t.Errorf("fault %q", got)
	}
	e.asMust(http.StatusNotFound, "p1admin", "GET", "/v1/nodes/"+e.c+"/traits", "1.80", nil)
}
