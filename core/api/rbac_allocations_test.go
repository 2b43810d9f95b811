package api_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/htpasswd"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// pwAuth accepts every user with the password "pw".
type pwAuth struct{}

func (pwAuth) Check(_, pw string) bool { return pw == "pw" }

// projectUsers scopes users as a projects file would; root is unlisted
// (a system admin).
type projectUsers map[string]htpasswd.Scope

func (p projectUsers) Scope(user string) (htpasswd.Scope, bool) { sc, ok := p[user]; return sc, ok }

// TestRBACAllocationsProjectScoped: allocations take Ironic's default
// policies over a real conductor. A project member creates allocations
// owned by its project (naming another owner is 403), which a conductor
// fills only from nodes its project owns or leases; candidates outside it
// are "cannot be found". A project reads its allocations only (another
// project's is 404, asking to list another owner's 403), a reader cannot
// create, update or delete them, a member can; the system reads all.
func TestRBACAllocationsProjectScoped(t *testing.T) {
	users := projectUsers{
		"sysread":  {Project: "", Role: htpasswd.Reader},
		"p1member": {Project: "p1", Role: htpasswd.Member},
		"p1reader": {Project: "p1", Role: htpasswd.Reader},
		"p2member": {Project: "p2", Role: htpasswd.Member},
	}
	h := newStackWith(t, release.NewPinner(release.Default(), release.Pin{}),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)}, api.WithTestMaxAPI("1.79"),
		func(d *api.Deps) { d.Auth, d.Projects = pwAuth{}, users })
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	root := &allocStack{t: t, url: srv.URL, user: "root"}
	as := func(user string) *allocStack { return &allocStack{t: t, url: srv.URL, user: user} }
	nodes := map[string]string{}
	for name, body := range map[string]string{"owned": `"owner":"p1"`, "leased": `"owner":"p9","lessee":"p1"`, "other": `"owner":"p9"`} {
		nodes[name] = root.call("1.65", "POST", "/v1/nodes",
			fmt.Sprintf(`{"name":%q,"driver":"fake-hardware","resource_class":"gold",%s}`, name, body), 201)["uuid"].(string)
		for _, verb := range []string{"manage", "provide"} {
			root.call("1.65", "PUT", "/v1/nodes/"+name+"/states/provision", fmt.Sprintf(`{"target":%q}`, verb), 202)
			root.waitNode(nodes[name], map[string]string{"manage": "manageable", "provide": "available"}[verb])
		}
		root.call("1.65", "PUT", "/v1/nodes/"+name+"/states/power", `{"target":"power off"}`, 202)
		root.waitFor("/v1/nodes/"+name, func(n map[string]any) bool { return n["power_state"] == "power off" && n["target_power_state"] == nil })
	}
	const denied = "Access was denied to the following resource: "
	// fault is the faultstring of Ironic's error body.
	fault := func(s *allocStack, ver, method, path, body string, want int) string {
		t.Helper()
		var f struct {
			Faultstring string `json:"faultstring"`
		}
		if err := json.Unmarshal([]byte(s.fault(ver, method, path, body, want)), &f); err != nil {
			t.Fatalf("%s %s: error_message is not Ironic's JSON: %v", method, path, err)
		}
		return f.Faultstring
	}

	// Create: the project's member, owner its project; a node of its own.
	if got := fault(as("p1reader"), "1.79", "POST", "/v1/allocations", `{"resource_class":"gold"}`, 403); got != denied+"baremetal:allocation:create" {
		t.Errorf("reader creates: %q", got)
	}
	if got := fault(as("p1member"), "1.79", "POST", "/v1/allocations", `{"resource_class":"gold","owner":"p9"}`, 403); got != "Cannot create allocation with an owner Project ID value p9 not matching the requester Project ID p1. Policy baremetal:allocation:create_restricted is required for this capability." {
		t.Errorf("another owner: %q", got)
	}
	if got := fault(as("p1member"), "1.79", "POST", "/v1/allocations", `{"resource_class":"gold","candidate_nodes":["other","owned"]}`, 400); got != "Nodes cannot be found: other" {
		t.Errorf("candidate out of the project: %q", got)
	}
	mine := as("p1member").call("1.79", "POST", "/v1/allocations", `{"resource_class":"gold","name":"mine"}`, 201)
	if mine["owner"] != "p1" {
		t.Errorf("owner = %v, want the project p1", mine["owner"])
	}
	mine = root.settled(mine["uuid"].(string))
	if mine["state"] != "active" || (mine["node_uuid"] != nodes["owned"] && mine["node_uuid"] != nodes["leased"]) {
		t.Fatalf("project allocation = %v, want a node p1 owns or leases", mine)
	}
	theirs := root.settled(root.call("1.79", "POST", "/v1/allocations", `{"resource_class":"gold","name":"theirs","owner":"p9","candidate_nodes":["other"]}`, 201)["uuid"].(string))
	if theirs["state"] != "active" {
		t.Fatalf("system allocation = %v", theirs)
	}

	// Read: the project's only.
	list := func(user, q string) []string {
		var out []string
		for _, it := range as(user).call("1.79", "GET", "/v1/allocations"+q, "", 200)["allocations"].([]any) {
			out = append(out, it.(map[string]any)["name"].(string))
		}
		slices.Sort(out)
		return out
	}
	for user, want := range map[string][]string{"p1reader": {"mine"}, "p2member": nil, "sysread": {"mine", "theirs"}, "root": {"mine", "theirs"}} {
		if got := list(user, ""); !slices.Equal(got, want) {
			t.Errorf("%s lists %v, want %v", user, got, want)
		}
	}
	if got := list("p1reader", "?owner=p1"); !slices.Equal(got, []string{"mine"}) {
		t.Errorf("?owner=p1: %v", got)
	}
	if got := fault(as("p1reader"), "1.79", "GET", "/v1/allocations?owner=p9", "", 403); got != denied+"baremetal:allocation:list_all" {
		t.Errorf("?owner=p9: %q", got)
	}
	as("p1reader").call("1.79", "GET", "/v1/allocations/mine", "", 200)
	for _, c := range []struct{ method, body string }{{"GET", ""}, {"PATCH", `[{"op":"add","path":"/extra/k","value":"v"}]`}, {"DELETE", ""}} {
		if got := fault(as("p1member"), "1.79", c.method, "/v1/allocations/theirs", c.body, 404); got != "Allocation theirs could not be found." {
			t.Errorf("%s another project's allocation: %q", c.method, got)
		}
	}
	as("sysread").call("1.79", "GET", "/v1/allocations/theirs", "", 200)
	// The node's allocation: the node must be seen, then the allocation read.
	myNode := mine["node_uuid"].(string)
	as("p1reader").call("1.79", "GET", "/v1/nodes/"+myNode+"/allocation", "", 200)
	as("p1reader").call("1.79", "GET", "/v1/nodes/other/allocation", "", 400) // not seen: not found (400, as for any unknown node here)
	as("p1reader").call("1.79", "DELETE", "/v1/nodes/other/allocation", "", 404)

	// Write: members of the owning project.
	patch := `[{"op":"add","path":"/extra/k","value":"v"}]`
	if got := fault(as("p1reader"), "1.79", "PATCH", "/v1/allocations/mine", patch, 403); got != denied+"baremetal:allocation:update" {
		t.Errorf("reader patches: %q", got)
	}
	as("p1member").call("1.79", "PATCH", "/v1/allocations/mine", patch, 200)
	if got := fault(as("sysread"), "1.79", "PATCH", "/v1/allocations/theirs", patch, 403); got != denied+"baremetal:allocation:update" {
		t.Errorf("system reader patches: %q", got)
	}
	if got := fault(as("p1reader"), "1.79", "DELETE", "/v1/allocations/mine", "", 403); got != denied+"baremetal:allocation:delete" {
		t.Errorf("reader deletes: %q", got)
	}
	if got := fault(as("p1reader"), "1.79", "DELETE", "/v1/nodes/"+myNode+"/allocation", "", 403); got != denied+"baremetal:allocation:delete" {
		t.Errorf("reader deletes the node's allocation: %q", got)
	}
	as("p1member").call("1.79", "DELETE", "/v1/nodes/"+myNode+"/allocation", "", 204)
	if got := list("root", ""); !slices.Equal(got, []string{"theirs"}) {
		t.Errorf("after the project's delete: %v", got)
	}
}
