package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/release"
)

// TestV1_37NodeTraits: below 1.37 /traits answers as Ironic's older
// releases (GET 406, PUT 405, DELETE 404) and nodes show no traits; from
// 1.37 traits are listed, replaced, added and removed through a real
// conductor with Ironic's validation, and shown by node GET, lists and
// ?fields=traits.
func TestV1_37NodeTraits(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.37"), withRealConductor(t))
	id := e.node(map[string]any{"name": "n1"})
	base := "/v1/nodes/" + id + "/traits"

	// One version below.
	if got := e.must(http.StatusNotAcceptable, "GET", base, "1.36", nil).Fault(t); got != "Request not acceptable." {
		t.Errorf("GET @1.36: %q", got)
	}
	e.must(http.StatusMethodNotAllowed, "PUT", base, "1.36", map[string]any{"traits": []string{}})
	e.must(http.StatusMethodNotAllowed, "PUT", base+"/CUSTOM_A", "1.36", nil)
	e.must(http.StatusNotFound, "DELETE", base, "1.36", nil)
	e.must(http.StatusNotFound, "DELETE", base+"/CUSTOM_A", "1.36", nil)
	if _, ok := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.36", nil).JSON(t)["traits"]; ok {
		t.Error("traits shown at 1.36")
	}
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes/"+id+"?fields=traits", "1.36", nil)
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes?fields=uuid,traits", "1.36", nil)

	list := func() []any {
		t.Helper()
		return e.must(http.StatusOK, "GET", base, "1.37", nil).JSON(t)["traits"].([]any)
	}
	if got := list(); len(got) != 0 {
		t.Fatalf("new node's traits: %v", got)
	}
	e.must(http.StatusNoContent, "PUT", "/v1/nodes/n1/traits", "1.37", map[string]any{"traits": []string{"CUSTOM_B", "HW_CPU_X86_AVX2", "CUSTOM_B"}})
	r := e.must(http.StatusNoContent, "PUT", "/v1/nodes/n1/traits/CUSTOM_A", "1.37", nil)
	if loc := r.Header.Get("Location"); loc != "http://rivet.test/v1/nodes/n1/traits/CUSTOM_A" {
		t.Errorf("Location %q", loc)
	}
	e.must(http.StatusNoContent, "PUT", base+"/CUSTOM_A", "1.37", map[string]any{}) // again: nothing new
	want := []any{"CUSTOM_A", "CUSTOM_B", "HW_CPU_X86_AVX2"}
	if d := cmp.Diff(want, list()); d != "" {
		t.Errorf("traits (-want +got):\n%s", d)
	}
	node := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.37", nil).JSON(t)
	if d := cmp.Diff(want, node["traits"]); d != "" {
		t.Errorf("node GET traits (-want +got):\n%s", d)
	}
	only := e.must(http.StatusOK, "GET", "/v1/nodes/"+id+"?fields=traits", "1.37", nil).JSON(t)
	if d := cmp.Diff(map[string]any{"traits": want, "links": only["links"]}, only); d != "" {
		t.Errorf("?fields=traits (-want +got):\n%s", d)
	}
	other := e.node(nil)
	items := e.must(http.StatusOK, "GET", "/v1/nodes?fields=uuid,traits,power_state", "1.37", nil).JSON(t)["nodes"].([]any)
	got := map[string]any{}
	for _, it := range items {
		m := it.(map[string]any)
		got[m["uuid"].(string)] = m["traits"]
	}
	if d := cmp.Diff(map[string]any{id: want, other: []any{}}, got); d != "" {
		t.Errorf("list traits (-want +got):\n%s", d)
	}
	for _, it := range e.must(http.StatusOK, "GET", "/v1/nodes/detail", "1.37", nil).JSON(t)["nodes"].([]any) {
		if _, ok := it.(map[string]any)["traits"]; !ok {
			t.Errorf("detail item without traits: %v", it)
		}
	}
	for _, it := range e.must(http.StatusOK, "GET", "/v1/nodes", "1.37", nil).JSON(t)["nodes"].([]any) {
		if _, ok := it.(map[string]any)["traits"]; ok {
			t.Errorf("default list item with traits: %v", it)
		}
	}
	if p := e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "1.37", []map[string]any{{"op": "add", "path": "/extra/a", "value": "b"}}).JSON(t); p["traits"] == nil {
		t.Errorf("PATCH answer without traits: %v", p)
	}
	if c := e.must(http.StatusCreated, "POST", "/v1/nodes", "1.37", map[string]any{"driver": "fake-hardware"}).JSON(t); fmt.Sprint(c["traits"]) != "[]" {
		t.Errorf("POST answer traits: %v", c["traits"])
	}

	// Ironic's refusals.
	for name, tc := range map[string]struct {
		method, path string
		body         any
		code         int
		fault        string
	}{
		"bad trait": {"PUT", base + "/bad_trait", nil, 400, "Schema error for trait: 'bad_trait' is not valid under any of the given schemas. " +
			"Possible root cause: 'bad_trait' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		"too long": {"PUT", base + "/CUSTOM_" + strings.Repeat("T", 249), nil, 400, "Schema error for trait: 'CUSTOM_" + strings.Repeat("T", 249) + "' is too long"},
		"bad in list": {"PUT", base, map[string]any{"traits": []string{"CUSTOM_3", "BAD_TRAIT"}}, 400,
			"Schema error for body: 'BAD_TRAIT' is not valid under any of the given schemas. Possible root cause: 'BAD_TRAIT' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		"no body":          {"PUT", base, map[string]any{}, 400, msgOneTraitOrAll},
		"empty body":       {"PUT", base, nil, 400, msgOneTraitOrAll},
		"trait in body":    {"PUT", base, map[string]any{"trait": "CUSTOM_3"}, 400, "Schema error for body: Additional properties are not allowed ('trait' was unexpected)"},
		"both":             {"PUT", base + "/CUSTOM_3", map[string]any{"traits": []string{"CUSTOM_3"}}, 400, msgOneTraitOrAll},
		"not a list":       {"PUT", base, map[string]any{"traits": "CUSTOM_3"}, 400, "Schema error for body: 'CUSTOM_3' is not of type 'array'"},
		"not a string":     {"PUT", base, map[string]any{"traits": []any{3}}, 400, "Schema error for body: 3 is not of type 'string'"},
		"missing node":     {"GET", "/v1/nodes/badname/traits", nil, 404, "Node badname could not be found."},
		"remove not there": {"DELETE", base + "/CUSTOM_12", nil, 404, "Node " + id + " doesn't have a trait 'CUSTOM_12'"},
		"patch traits":     {"PATCH", "/v1/nodes/" + id, []map[string]any{{"op": "add", "path": "/traits", "value": []string{"CUSTOM_X"}}}, 400, "Cannot patch /traits. Only the following can be updated: " + strings.Join(nodePatch.allowed, ", ")},
		"post with traits": {"POST", "/v1/nodes", map[string]any{"driver": "fake-hardware", "traits": []string{"CUSTOM_X"}}, 400, "Unknown attribute for argument node: traits"},
		"get one trait":    {"GET", base + "/CUSTOM_A", nil, 405, ""},
	} {
		t.Run(name, func(t *testing.T) {
			r := e.must(tc.code, tc.method, tc.path, "1.37", tc.body)
			if tc.fault != "" {
				if got := r.Fault(t); got != tc.fault {
					t.Errorf("fault %q\nwant  %q", got, tc.fault)
				}
			}
		})
	}
	if d := cmp.Diff(want, list()); d != "" {
		t.Errorf("refused requests changed the traits (-want +got):\n%s", d)
	}

	// At most 50 traits: refused whole, by the conductor.
	many := []string{}
	for i := range 48 {
		many = append(many, fmt.Sprintf("CUSTOM_T%02d", i))
	}
	e.must(http.StatusBadRequest, "PUT", base, "1.37", map[string]any{"traits": append(slices.Clone(many), "CUSTOM_X", "CUSTOM_Y", "CUSTOM_Z")})
	e.must(http.StatusNoContent, "PUT", base, "1.37", map[string]any{"traits": append(slices.Clone(many), "CUSTOM_X", "CUSTOM_Y")})
	got50 := e.must(http.StatusBadRequest, "PUT", base+"/CUSTOM_Z", "1.37", nil).Fault(t)
	if want := "Could not modify traits for node " + id + " as it would exceed the maximum number of traits per node (51 vs. 50)"; got50 != want {
		t.Errorf("51st trait: %q", got50)
	}
	e.must(http.StatusNoContent, "DELETE", base+"/CUSTOM_X", "1.37", nil)
	e.must(http.StatusNoContent, "DELETE", base, "1.37", nil)
	if got := list(); len(got) != 0 {
		t.Errorf("after DELETE all: %v", got)
	}
	// A deleted node takes its traits with it.
	e.must(http.StatusNoContent, "PUT", base+"/CUSTOM_A", "1.37", nil)
	e.must(http.StatusNoContent, "DELETE", "/v1/nodes/"+id, "1.37", nil)
	if n, err := e.store.DB().Bun().NewSelect().Table("node_traits").Count(t.Context()); err != nil || n != 0 {
		t.Errorf("traits left after the node was deleted: %d, %v", n, err)
	}
}

// TestPinnedNodeTraits: pinned to release 0.2 (API 1.31, RPC 1.4) every
// traits, deploy template and runbook request is 406 from the microversion
// check, whatever the test cap, so nothing reaches the conductor or the
// new tables; at "latest" (1.31) they are not resources.
func TestPinnedNodeTraits(t *testing.T) {
	old, ok := release.Default().Lookup("0.2")
	if !ok {
		t.Fatal("no release 0.2")
	}
	e := newEnvPinned(t, release.NewPinner(release.Default(), release.Pin{Mode: release.PinRelease, Release: old}), withMaxAPI("1.110"))
	id := e.node(nil)
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		e.must(http.StatusNotAcceptable, m, "/v1/nodes/"+id+"/traits", "1.37", map[string]any{"traits": []string{"CUSTOM_A"}})
	}
	e.must(http.StatusMethodNotAllowed, "PUT", "/v1/nodes/"+id+"/traits/CUSTOM_A", "latest", nil)
	for path, ver := range map[string]string{"/v1/deploy_templates": "1.55", "/v1/runbooks": "1.92"} {
		e.must(http.StatusNotAcceptable, "GET", path, ver, nil)
		e.must(http.StatusNotAcceptable, "POST", path, ver, runbookBody("CUSTOM_A"))
		e.must(http.StatusNotFound, "GET", path, "latest", nil)
		e.must(http.StatusMethodNotAllowed, "POST", path, "latest", runbookBody("CUSTOM_A"))
	}
	if slices.ContainsFunc(e.cond.calls, func(c string) bool { return strings.Contains(c, "traits") }) {
		t.Errorf("a pinned API sent a traits call: %v", e.cond.calls)
	}
}

// TestInstanceTraitsValidated: the deploy interface's validation (GET
// …/validate, and a deploy's checks) refuses instance traits the node
// lacks, as Ironic's validate_instance_info_traits, since deploy
// templates are matched against them.
func TestInstanceTraitsValidated(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.37"), withRealConductor(t))
	id := e.node(nil)
	e.must(http.StatusNoContent, "PUT", "/v1/nodes/"+id+"/traits", "1.37", map[string]any{"traits": []string{"CUSTOM_RAID1"}})
	deploy := func() map[string]any {
		t.Helper()
		return e.must(http.StatusOK, "GET", "/v1/nodes/"+id+"/validate", "1.37", nil).JSON(t)["deploy"].(map[string]any)
	}
	patch := func(traits any) {
		t.Helper()
		e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "1.37", []map[string]any{{"op": "add", "path": "/instance_info/traits", "value": traits}})
	}
	patch([]string{"CUSTOM_RAID1"})
	if d := deploy(); d["result"] != true {
		t.Errorf("instance traits on the node: %v", d)
	}
	patch([]string{"CUSTOM_RAID1", "CUSTOM_GPU"})
	if d := deploy(); d["result"] != false || d["reason"] != "Cannot specify instance traits that are not also set on the node. Node "+id+" is missing traits CUSTOM_GPU" {
		t.Errorf("a trait the node lacks: %v", d)
	}
	patch("CUSTOM_RAID1")
	if d := deploy(); d["result"] != false || !strings.Contains(fmt.Sprint(d["reason"]), "A list of strings is expected.") {
		t.Errorf("not a list: %v", d)
	}
}

// TestDeployRefusesMissingInstanceTraits: a deploy whose instance traits
// are not all node traits is refused before it starts, with Ironic's
// InstanceDeployFailure wording, and the node stays available.
func TestDeployRefusesMissingInstanceTraits(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.37"), withRealConductor(t))
	id := e.node(nil)
	waitFor := func(state string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			n := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.37", nil).JSON(t)
			if n["provision_state"] == state && n["target_provision_state"] == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("node never reached %s: %v", state, n["provision_state"])
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, step := range []struct{ verb, state string }{{"manage", "manageable"}, {"provide", "available"}} {
		e.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id+"/states/provision", "1.37", map[string]any{"target": step.verb})
		waitFor(step.state)
	}
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "1.37", []map[string]any{{"op": "add", "path": "/instance_info/traits", "value": []string{"CUSTOM_GPU"}}})
	got := e.must(http.StatusBadRequest, "PUT", "/v1/nodes/"+id+"/states/provision", "1.37", map[string]any{"target": "active"}).Fault(t)
	if want := "Failed to validate deploy or power info for node " + id + ". Error: Cannot specify instance traits that are not also set on the node. Node " + id + " is missing traits CUSTOM_GPU"; got != want {
		t.Errorf("deploy: %q\nwant     %q", got, want)
	}
	if n := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.37", nil).JSON(t); n["provision_state"] != "available" {
		t.Errorf("node moved to %v", n["provision_state"])
	}
	e.must(http.StatusNoContent, "PUT", "/v1/nodes/"+id+"/traits/CUSTOM_GPU", "1.37", nil)
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id+"/states/provision", "1.37", map[string]any{"target": "active"})
	waitFor("active")
}
