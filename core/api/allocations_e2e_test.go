package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"

	"github.com/rivetmetal/rivet/core/conductor"
)

// allocStack is the API over a real conductor serving up to 1.79.
type allocStack struct {
	t    *testing.T
	url  string
	user string // sent with HTTP basic auth (password "pw") when set
}

func newAllocStack(t *testing.T) *allocStack {
	t.Helper()
	h := newStackWith(t, release.NewPinner(release.Default(), release.Pin{}),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)}, api.WithTestMaxAPI("1.79"))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &allocStack{t: t, url: srv.URL}
}

func (s *allocStack) call(ver, method, path, body string, want int) map[string]any {
	s.t.Helper()
	code, out := httpCallAs(s.t, s.url, s.user, ver, method, path, body)
	if code != want {
		s.t.Fatalf("%s %s @%s: %d, want %d: %v", method, path, ver, code, want, out)
	}
	return out
}

// fault returns the faultstring of an error answer.
func (s *allocStack) fault(ver, method, path, body string, want int) string {
	s.t.Helper()
	out := s.call(ver, method, path, body, want)
	msg, _ := out["error_message"].(string)
	return msg
}

// available enrolls a fake-hardware node of resource class rc and takes it
// to available (manage, provide), as clients do.
func (s *allocStack) available(name, rc string) string {
	s.t.Helper()
	id := s.call("1.52", "POST", "/v1/nodes", fmt.Sprintf(`{"name":%q,"driver":"fake-hardware","resource_class":%q}`, name, rc), 201)["uuid"].(string)
	for _, verb := range []string{"manage", "provide"} {
		s.call("1.52", "PUT", "/v1/nodes/"+id+"/states/provision", fmt.Sprintf(`{"target":%q}`, verb), 202)
		s.waitNode(id, map[string]string{"manage": "manageable", "provide": "available"}[verb])
	}
	// A power state, as the power sync would record (disabled here).
	s.call("1.52", "PUT", "/v1/nodes/"+id+"/states/power", `{"target":"power off"}`, 202)
	s.waitFor("/v1/nodes/"+id, func(n map[string]any) bool { return n["power_state"] == "power off" && n["target_power_state"] == nil })
	return id
}

func (s *allocStack) waitNode(id, state string) map[string]any {
	return s.waitFor("/v1/nodes/"+id, func(n map[string]any) bool {
		return n["provision_state"] == state && n["target_provision_state"] == nil
	})
}

func (s *allocStack) waitFor(path string, ok func(map[string]any) bool) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := s.call("1.79", "GET", path, "", 200)
		if ok(out) {
			return out
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s never got there: %v", path, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settled waits until the allocation is no longer allocating.
func (s *allocStack) settled(id string) map[string]any {
	return s.waitFor("/v1/allocations/"+id, func(a map[string]any) bool { return a["state"] != "allocating" })
}

func TestV1_52Allocations(t *testing.T) {
	s := newAllocStack(t)
	n1 := s.available("n1", "gold")

	// Below 1.52: reads 404, writes 405, the node's allocation 404 (routing).
	for _, c := range []struct{ method, path string }{{"GET", "/v1/allocations"}, {"GET", "/v1/allocations/a1"}} {
		if got := s.fault("1.51", c.method, c.path, "", 404); !strings.Contains(got, "The API version does not allow allocations") {
			t.Errorf("%s %s @1.51: %s", c.method, c.path, got)
		}
	}
	for _, c := range []struct{ method, path string }{{"POST", "/v1/allocations"}, {"DELETE", "/v1/allocations/a1"}} {
		if got := s.fault("1.51", c.method, c.path, `{"resource_class":"gold"}`, 405); !strings.Contains(got, "The API version does not allow allocations") {
			t.Errorf("%s %s @1.51: %s", c.method, c.path, got)
		}
	}
	if got := s.fault("1.51", "GET", "/v1/nodes/n1/allocation", "", 404); !strings.Contains(got, `\"title\": \"Not Found\"`) && !strings.Contains(got, `"title":"Not Found"`) {
		t.Errorf("node allocation @1.51: %s", got)
	}
	if n := s.call("1.51", "GET", "/v1/nodes/"+n1, "", 200); n["allocation_uuid"] != nil || hasKey(n, "allocation_uuid") {
		t.Errorf("allocation_uuid shown at 1.51")
	}
	s.call("1.51", "GET", "/v1/nodes/"+n1+"?fields=allocation_uuid", "", 406)

	// Validation, as Ironic's schema.
	bad := map[string]string{
		`{}`:                                                   "The resource_class field is mandatory when not backfilling",
		`{"resource_class": 5}`:                                "Schema error: 5 is not of type 'string', 'null'",
		`{"resource_class":"gold","bogus":1}`:                  "Schema error: Additional properties are not allowed ('bogus' was unexpected)",
		`{"resource_class":"gold","node":"n1"}`:                "Schema error: Additional properties are not allowed ('node' was unexpected)",
		`{"resource_class":"gold","name":"a b"}`:               "Cannot create allocation with invalid name 'a b'",
		`{"resource_class":"gold","traits":["lower"]}`:         "Schema error: 'lower' is not valid under any of the given schemas",
		`{"resource_class":"gold","candidate_nodes":["nope"]}`: "Nodes cannot be found: nope",
		`{"resource_class":"` + strings.Repeat("x", 81) + `"}`: "is too long",
		// jsonschema sorts the unexpected names; the middleware reports
		// the first error it finds, not best_match's (shallowest) one.
		`{"resource_class":"gold","zz":1,"aa":2}`:        "Schema error: Additional properties are not allowed ('aa', 'zz' were unexpected)",
		`{"resource_class":5,"bogus":1}`:                 "Schema error: 5 is not of type 'string', 'null'",
		`{"resource_class":-0.0}`:                        "Schema error: -0.0 is not of type 'string', 'null'",
		`{"resource_class":1E-7}`:                        "Schema error: 1e-07 is not of type 'string', 'null'",
		`{"resource_class":"gold","traits":["HW_NOPE"]}`: "Schema error: 'HW_NOPE' is not valid under any of the given schemas",
	}
	for body, want := range bad {
		if got := s.fault("1.52", "POST", "/v1/allocations", body, 400); !strings.Contains(got, want) {
			t.Errorf("POST %s: %s, want %q", body, got, want)
		}
	}
	s.call("1.52", "POST", "/v1/allocations", `{"resource_class":"gold","owner":"p1"}`, 406)

	// A real allocation: answered allocating, then active on the node.
	r := s.call("1.52", "POST", "/v1/allocations", `{"resource_class":"gold","name":"alloc-1","candidate_nodes":["n1"],"extra":{"k":"v"}}`, 201)
	if r["state"] != "allocating" && r["state"] != "active" {
		t.Errorf("created in state %v", r["state"])
	}
	if hasKey(r, "owner") {
		t.Error("owner shown at 1.52")
	}
	a := s.settled(r["uuid"].(string))
	if a["state"] != "active" || a["node_uuid"] != n1 || a["name"] != "alloc-1" || fmt.Sprint(a["candidate_nodes"]) != "["+n1+"]" {
		t.Fatalf("allocation = %v", a)
	}
	n := s.call("1.52", "GET", "/v1/nodes/"+n1, "", 200)
	if n["allocation_uuid"] != a["uuid"] || n["instance_uuid"] != a["uuid"] {
		t.Errorf("node allocation_uuid %v instance_uuid %v, want %v", n["allocation_uuid"], n["instance_uuid"], a["uuid"])
	}
	if got := s.call("1.52", "GET", "/v1/nodes/n1/allocation?fields=uuid,state", "", 200); got["uuid"] != a["uuid"] || hasKey(got, "name") {
		t.Errorf("node allocation = %v", got)
	}
	list := s.call("1.52", "GET", "/v1/allocations?node=n1&state=active&resource_class=gold", "", 200)["allocations"].([]any)
	if len(list) != 1 {
		t.Errorf("filtered list = %v", list)
	}
	if got := s.fault("1.52", "GET", "/v1/allocations?node=ghost", "", 400); !strings.Contains(got, "Node ghost could not be found.") {
		t.Errorf("?node=ghost: %s", got)
	}
	s.call("1.52", "GET", "/v1/allocations?owner=p1", "", 406)
	if got := s.fault("1.52", "GET", "/v1/allocations?sort_key=traits", "", 400); !strings.Contains(got, "The sort_key value traits is an invalid field for sorting") {
		t.Errorf("sort_key=traits: %s", got)
	}

	// None left: error with Ironic's reason.
	b := s.call("1.52", "POST", "/v1/allocations", `{"resource_class":"gold"}`, 201)
	b = s.settled(b["uuid"].(string))
	if b["state"] != "error" || !strings.Contains(fmt.Sprint(b["last_error"]), "no available nodes match the resource class gold") || b["node_uuid"] != nil {
		t.Errorf("second allocation = %v", b)
	}
	s.call("1.52", "DELETE", "/v1/allocations/"+b["uuid"].(string), "", 204)
	s.call("1.52", "GET", "/v1/allocations/"+b["uuid"].(string), "", 404)

	// A node with an allocation cannot be deleted outside maintenance.
	if got := s.fault("1.52", "DELETE", "/v1/nodes/n1", "", 409); !strings.Contains(got, "is associated with instance") {
		t.Errorf("delete allocated node: %s", got)
	}
	// Deleting the node's allocation frees it.
	s.call("1.52", "DELETE", "/v1/nodes/n1/allocation", "", 204)
	n = s.call("1.52", "GET", "/v1/nodes/"+n1, "", 200)
	if n["allocation_uuid"] != nil || n["instance_uuid"] != nil {
		t.Errorf("after delete: %v %v", n["allocation_uuid"], n["instance_uuid"])
	}
	if got := s.fault("1.52", "GET", "/v1/nodes/n1/allocation", "", 404); !strings.Contains(got, "Allocation for node n1 was not found") {
		t.Errorf("no allocation: %s", got)
	}

	// Allocate again, deploy, undeploy: the allocation goes with the instance.
	c := s.settled(s.call("1.52", "POST", "/v1/allocations", `{"resource_class":"gold"}`, 201)["uuid"].(string))
	if c["state"] != "active" {
		t.Fatalf("third allocation = %v", c)
	}
	s.call("1.52", "PUT", "/v1/nodes/n1/states/provision", `{"target":"active"}`, 202)
	s.waitNode(n1, "active")
	if got := s.fault("1.52", "DELETE", "/v1/allocations/"+c["uuid"].(string), "", 409); !strings.Contains(got, "because the node is active") {
		t.Errorf("delete allocation of an active node: %s", got)
	}
	s.call("1.52", "PUT", "/v1/nodes/n1/states/provision", `{"target":"deleted"}`, 202)
	s.waitNode(n1, "available")
	s.call("1.52", "GET", "/v1/allocations/"+c["uuid"].(string), "", 404)
}

func TestV1_57AllocationPatch(t *testing.T) {
	s := newAllocStack(t)
	a := s.call("1.57", "POST", "/v1/allocations", `{"resource_class":"none","name":"p1"}`, 201)
	id := a["uuid"].(string)
	patch := `[{"op":"replace","path":"/name","value":"p2"},{"op":"add","path":"/extra/k","value":"v"}]`
	if got := s.fault("1.56", "PATCH", "/v1/allocations/"+id, patch, 405); !strings.Contains(got, "The API version does not allow updating allocations") {
		t.Errorf("1.56: %s", got)
	}
	out := s.call("1.57", "PATCH", "/v1/allocations/"+id, patch, 200)
	if out["name"] != "p2" || fmt.Sprint(out["extra"]) != "map[k:v]" {
		t.Errorf("patched = %v", out)
	}
	s.call("1.57", "GET", "/v1/allocations/p2", "", 200)
	if got := s.fault("1.57", "PATCH", "/v1/allocations/"+id, `[{"op":"replace","path":"/resource_class","value":"x"}]`, 400); !strings.Contains(got, "Cannot patch /resource_class. Only the following can be updated: name, extra") {
		t.Errorf("resource_class: %s", got)
	}
	for body, want := range map[string]string{
		`[{"op":"replace","path":"/name","value":5}]`:       "Cannot update allocation with invalid name '5'",
		`[{"op":"replace","path":"/name","value":"a b"}]`:   "Cannot update allocation with invalid name 'a b'",
		`[{"op":"replace","path":"/extra","value":"text"}]`: "Schema error for patch: 'text' is not of type 'object', 'null'",
	} {
		if got := s.fault("1.57", "PATCH", "/v1/allocations/"+id, body, 400); !strings.Contains(got, want) {
			t.Errorf("PATCH %s: %s, want %s", body, got, want)
		}
	}
	s.call("1.57", "POST", "/v1/allocations", `{"resource_class":"none","name":"p3"}`, 201)
	if got := s.fault("1.57", "PATCH", "/v1/allocations/"+id, `[{"op":"replace","path":"/name","value":"p3"}]`, 409); !strings.Contains(got, "An allocation with name p3 already exists.") {
		t.Errorf("duplicate name: %s", got)
	}
}

func TestV1_58AllocationBackfill(t *testing.T) {
	s := newAllocStack(t)
	id := s.available("d1", "gold")
	s.call("1.58", "PUT", "/v1/nodes/d1/states/provision", `{"target":"active"}`, 202)
	s.waitNode(id, "active")
	s.call("1.57", "POST", "/v1/allocations", `{"node":"d1"}`, 400)
	if got := s.fault("1.58", "POST", "/v1/allocations", `{"node":"ghost"}`, 400); !strings.Contains(got, "Node ghost could not be found.") {
		t.Errorf("ghost: %s", got)
	}
	a := s.call("1.58", "POST", "/v1/allocations", `{"node":"d1"}`, 201)
	if a["state"] != "active" || a["node_uuid"] != id || a["resource_class"] != "gold" {
		t.Errorf("backfilled = %v", a)
	}
	if n := s.call("1.58", "GET", "/v1/nodes/d1", "", 200); n["allocation_uuid"] != a["uuid"] {
		t.Errorf("node allocation_uuid = %v", n["allocation_uuid"])
	}
	other := s.available("d2", "gold")
	if got := s.fault("1.58", "POST", "/v1/allocations", `{"node":"d2"}`, 400); !strings.Contains(got, `Node must be in the \"active\" state`) && !strings.Contains(got, `Node must be in the "active" state`) {
		t.Errorf("backfill of available %s: %s", other, got)
	}
}

func TestV1_60AllocationOwner(t *testing.T) {
	s := newAllocStack(t)
	s.available("o1", "gold")
	a := s.call("1.60", "POST", "/v1/allocations", `{"resource_class":"gold","owner":"proj"}`, 201)
	if a["owner"] != "proj" {
		t.Errorf("owner = %v", a["owner"])
	}
	// No node is owned by proj (no node owner on this schema): none matches.
	if got := s.settled(a["uuid"].(string)); got["state"] != "error" {
		t.Errorf("owner-restricted allocation = %v", got)
	}
	if l := s.call("1.60", "GET", "/v1/allocations?owner=proj&fields=uuid,owner", "", 200)["allocations"].([]any); len(l) != 1 {
		t.Errorf("?owner = %v", l)
	}
	s.call("1.59", "GET", "/v1/allocations?fields=owner", "", 406)
	if got := s.call("1.59", "GET", "/v1/allocations/"+a["uuid"].(string), "", 200); hasKey(got, "owner") {
		t.Error("owner shown at 1.59")
	}
}

func TestV1_79AllocationPrefersName(t *testing.T) {
	s := newAllocStack(t)
	for i := range 4 {
		s.available(fmt.Sprintf("m%d", i), "gold")
	}
	// The node named as the allocation is taken first, every time.
	for _, name := range []string{"m2", "m0", "m3"} {
		a := s.settled(s.call("1.79", "POST", "/v1/allocations", fmt.Sprintf(`{"resource_class":"gold","name":%q}`, name), 201)["uuid"].(string))
		n := s.call("1.79", "GET", "/v1/nodes/"+name, "", 200)
		if a["node_uuid"] != n["uuid"] {
			t.Errorf("allocation %s took %v, not node %s", name, a["node_uuid"], name)
		}
	}
}

// TestAllocationsPinned: pinned to release 0.2 (API 1.31, RPC 1.4) the
// allocation API is not served (406) and nothing reaches a conductor.
func TestAllocationsPinned(t *testing.T) {
	table := release.Default()
	pin, err := table.ParsePin("0.2")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newStackWith(t, release.NewPinner(table, pin),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)}, api.WithTestMaxAPI("1.79")))
	defer srv.Close()
	if code, _ := httpCall(t, srv.URL, "1.52", "POST", "/v1/allocations", `{"resource_class":"gold"}`); code != http.StatusNotAcceptable {
		t.Errorf("POST @1.52 pinned: %d", code)
	}
	if code, _ := httpCall(t, srv.URL, "latest", "POST", "/v1/allocations", `{"resource_class":"gold"}`); code != http.StatusMethodNotAllowed {
		t.Errorf("POST @latest (1.31) pinned: %d", code)
	}
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }
