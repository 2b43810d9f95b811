package api

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/release"
)

// TestV1_40BIOS: the node BIOS settings resource (API 1.40) lists and
// shows settings written through the store (what a bios interface's cache
// step will call), by node UUID or name, as Ironic shapes them; below
// 1.40 it is 404 as Ironic's node controller answers, and the node field
// bios_interface appears at 1.40 (TestV1_40BIOSInterface).
func TestV1_40BIOS(t *testing.T) {
	TestV1_40BIOSInterface(t)
	e := newEnv(t, withMaxAPI("1.40"))
	a, b := e.node(map[string]any{"name": "bios-node"}), e.node(nil)

	// no-bios caches nothing: an empty list, as Ironic's no-bios node.
	if got := e.must(http.StatusOK, "GET", "/v1/nodes/"+a+"/bios", "1.40", nil).JSON(t)["bios"].([]any); len(got) != 0 {
		t.Errorf("settings of a no-bios node: %v", got)
	}
	na, err := e.store.GetNode(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	nb, err := e.store.GetNode(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	s := func(v string) *string { return &v }
	if err := e.store.ReplaceBIOSSettings(t.Context(), na.ID, map[string]*string{"Virtualization": s("Enabled"), "BootMode": s("Uefi")}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.ReplaceBIOSSettings(t.Context(), nb.ID, map[string]*string{"Other": s("x")}); err != nil {
		t.Fatal(err)
	}

	e.must(http.StatusNotFound, "GET", "/v1/nodes/"+a+"/bios", "1.39", nil)
	e.must(http.StatusNotFound, "GET", "/v1/nodes/"+a+"/bios/BootMode", "1.39", nil)

	list := e.must(http.StatusOK, "GET", "/v1/nodes/bios-node/bios", "1.40", nil).JSON(t)
	if d := cmp.Diff([]string{"bios"}, keys(list)); d != "" {
		t.Errorf("list keys (-want +got):\n%s", d)
	}
	items := list["bios"].([]any)
	if len(items) != 2 {
		t.Fatalf("settings %v, want 2", items)
	}
	first := items[0].(map[string]any)
	if d := cmp.Diff([]string{"created_at", "links", "name", "updated_at", "value"}, keys(first)); d != "" {
		t.Errorf("setting fields (-want +got):\n%s", d)
	}
	if first["name"] != "BootMode" || first["value"] != "Uefi" || first["created_at"] == nil || first["updated_at"] != nil {
		t.Errorf("first setting %v", first)
	}
	// The list's links name the node as the request did (Ironic).
	wantLinks := []any{
		map[string]any{"href": "http://rivet.test/v1/nodes/bios-node/bios/BootMode", "rel": "self"},
		map[string]any{"href": "http://rivet.test/nodes/bios-node/bios/BootMode", "rel": "bookmark"},
	}
	if d := cmp.Diff(wantLinks, first["links"]); d != "" {
		t.Errorf("list links (-want +got):\n%s", d)
	}
	if n := items[1].(map[string]any)["name"]; n != "Virtualization" {
		t.Errorf("second setting %v", n)
	}

	// Before 1.74 neither detail nor fields is admitted (Ironic's query schema).
	r := e.must(http.StatusBadRequest, "GET", "/v1/nodes/"+a+"/bios?fields=name", "1.40", nil)
	if got, want := r.Fault(t), "Schema error: Additional properties are not allowed ('fields' was unexpected)"; got != want {
		t.Errorf("fault %q, want %q", got, want)
	}
	e.must(http.StatusBadRequest, "GET", "/v1/nodes/"+a+"/bios?detail=true", "1.40", nil)

	one := e.must(http.StatusOK, "GET", "/v1/nodes/bios-node/bios/Virtualization", "1.40", nil).JSON(t)
	if d := cmp.Diff([]string{"Virtualization"}, keys(one)); d != "" {
		t.Fatalf("show keys (-want +got):\n%s", d)
	}
	v := one["Virtualization"].(map[string]any)
	if v["value"] != "Enabled" || v["name"] != "Virtualization" {
		t.Errorf("setting %v", v)
	}
	// One setting's links name the node by UUID (Ironic).
	if href := v["links"].([]any)[0].(map[string]any)["href"]; href != "http://rivet.test/v1/nodes/"+a+"/bios/Virtualization" {
		t.Errorf("show link %v", href)
	}
	// Another node's setting is not this node's.
	r = e.must(http.StatusNotFound, "GET", "/v1/nodes/"+a+"/bios/Other", "1.40", nil)
	if got, want := r.Fault(t), fmt.Sprintf("Node %s doesn't have a BIOS setting 'Other'", a); got != want {
		t.Errorf("fault %q, want %q", got, want)
	}
	e.must(http.StatusNotFound, "GET", "/v1/nodes/nope/bios", "1.40", nil)
	e.must(http.StatusNotFound, "GET", "/v1/nodes/nope/bios/BootMode", "1.40", nil)

}

// While pinned to 0.2 (API 1.31) the BIOS resource is refused as any
// version above the pinned maximum is: 406.
func TestBIOSPinned(t *testing.T) {
	pin, err := release.Default().ParsePin("0.2")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvPinned(t, release.NewPinner(release.Default(), pin), withMaxAPI("1.40"))
	id := e.node(nil)
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes/"+id+"/bios", "1.40", nil)
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes/"+id+"/bios/x", "1.40", nil)
	e.must(http.StatusNotFound, "GET", "/v1/nodes/"+id+"/bios", "latest", nil)
}
