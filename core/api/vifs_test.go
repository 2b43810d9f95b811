package api

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
)

// TestV1_28NodeVIFs: /v1/nodes/{node}/vifs lists, attaches and detaches
// VIFs from 1.28 and does not exist below it, with Ironic's validation.
func TestV1_28NodeVIFs(t *testing.T) {
	e := newEnv(t)
	id := e.node(map[string]any{"name": "n1"})
	vifs := "/v1/nodes/" + id + "/vifs"
	for _, c := range []struct{ method, path string }{{"GET", vifs}, {"POST", vifs}, {"DELETE", vifs + "/vif-1"}} {
		r := e.must(http.StatusNotFound, c.method, c.path, "1.27", map[string]any{"id": "vif-1"})
		if got := r.Fault(t); got != "Resource could not be found." {
			t.Errorf("%s %s @1.27: %q", c.method, c.path, got)
		}
	}
	list := func() []any {
		t.Helper()
		return e.must(http.StatusOK, "GET", "/v1/nodes/n1/vifs", "1.28", nil).JSON(t)["vifs"].([]any)
	}
	if got := list(); len(got) != 0 {
		t.Fatalf("new node has VIFs %v", got)
	}
	if got := e.must(http.StatusBadRequest, "POST", vifs, "1.28", map[string]any{"id": "vif-1"}).Fault(t); got != "Unable to attach VIF vif-1, not enough free physical ports." {
		t.Errorf("no port: %q", got)
	}
	e.must(http.StatusCreated, "POST", "/v1/ports", "1.28", map[string]any{"node_uuid": id, "address": "52:54:00:00:00:01"})
	r := e.must(http.StatusNoContent, "POST", vifs, "1.28", map[string]any{"id": "vif-1", "tag": "blue"})
	if len(r.Body) != 0 {
		t.Errorf("204 with a body %q", r.Body)
	}
	if d := cmp.Diff(map[string]any{"id": "vif-1", "tag": "blue"}, e.cond.vifInfo); d != "" {
		t.Errorf("vif_info sent (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]any{map[string]any{"id": "vif-1"}}, list()); d != "" {
		t.Errorf("list (-want +got):\n%s", d)
	}
	e.must(http.StatusConflict, "POST", vifs, "1.28", map[string]any{"id": "vif-1"})

	bad := map[string]struct {
		body any
		want string
	}{
		"no id":      {map[string]any{"tag": "x"}, "Schema error for vif: 'id' is a required property"},
		"numeric id": {map[string]any{"id": 5}, "Schema error for vif: 5 is not of type 'string'"},
		"null id":    {map[string]any{"id": nil}, "Schema error for vif: None is not of type 'string'"},
		// Python's repr of what json.loads made of the id.
		"float id":     {map[string]any{"id": json.RawMessage("1e2")}, "Schema error for vif: 100.0 is not of type 'string'"},
		"object id":    {map[string]any{"id": map[string]any{"b": []any{true}, "a": "it's"}}, `Schema error for vif: {'a': "it's", 'b': [True]} is not of type 'string'`},
		"invalid name": {map[string]any{"id": "a b"}, "Expected UUID or name for id: a b"},
		"not a dict":   {[]any{"vif-2"}, "Invalid JSON body: expected an object"},
		"not JSON":     {"{", "Invalid JSON body: the JSON document is incomplete"},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			if got := e.must(http.StatusBadRequest, "POST", vifs, "1.28", tc.body).Fault(t); got != tc.want {
				t.Errorf("fault %q, want %q", got, tc.want)
			}
		})
	}
	if got := e.must(http.StatusBadRequest, "DELETE", vifs+"/a%20b", "1.28", nil).Fault(t); got != "Expected UUID or name for vif_id: a b" {
		t.Errorf("invalid vif_id: %q", got)
	}
	e.must(http.StatusBadRequest, "DELETE", vifs+"/vif-9", "1.28", nil)
	e.must(http.StatusNoContent, "DELETE", vifs+"/vif-1", "1.28", nil)
	if got := list(); len(got) != 0 {
		t.Errorf("after detach: %v", got)
	}
	if got := e.must(http.StatusNotFound, "GET", "/v1/nodes/nope/vifs", "1.28", nil).Fault(t); got != "Node nope could not be found." {
		t.Errorf("missing node: %q", got)
	}
	e.must(http.StatusMethodNotAllowed, "PUT", vifs, "1.28", map[string]any{})
}

// TestV1_29InjectNMI: PUT .../management/inject_nmi asks the conductor
// from 1.29 (204) and does not exist below it; a driver without NMI is
// Ironic's 400.
func TestV1_29InjectNMI(t *testing.T) {
	e := newEnv(t)
	id := e.node(nil)
	path := "/v1/nodes/" + id + "/management/inject_nmi"
	if got := e.must(http.StatusNotFound, "PUT", path, "1.28", map[string]any{}).Fault(t); got != "Resource could not be found." {
		t.Errorf("@1.28: %q", got)
	}
	e.must(http.StatusNoContent, "PUT", path, "1.29", map[string]any{})
	e.must(http.StatusNoContent, "PUT", path, "1.29", nil) // Ironic reads no body
	if d := cmp.Diff([]string{"create_node", "inject_nmi", "inject_nmi"}, e.cond.calls); d != "" {
		t.Errorf("conductor calls (-want +got):\n%s", d)
	}
	e.cond.noNMI = true
	if got := e.must(http.StatusBadRequest, "PUT", path, "1.29", map[string]any{}).Fault(t); got != "Driver fake-hardware does not support inject_nmi (disabled or not implemented)." {
		t.Errorf("no NMI: %q", got)
	}
	e.must(http.StatusNotFound, "PUT", "/v1/nodes/nope/management/inject_nmi", "1.29", map[string]any{})
	e.must(http.StatusMethodNotAllowed, "GET", path, "1.29", nil)
}

// TestPinnedBelowVIFsAndNMI: pinned to a release whose API is 1.26 (RPC
// 1.0), 1.28 and 1.29 are refused with 406 and "latest" is 1.26, where
// neither resource exists; nothing reaches the conductor.
func TestPinnedBelowVIFsAndNMI(t *testing.T) {
	v := version.MustParse
	objs := map[string][]version.Version{"Chassis": {v("1.0")}, "Conductor": {v("1.0")}, "Node": {v("1.0")}, "Port": {v("1.0")}, "Portgroup": {v("1.0")}}
	old := release.Entry{Version: "0.1", Name: "tack", API: v("1.26"), RPC: v("1.0"), Objects: objs, ServiceVersion: 1}
	table, err := release.NewTable(release.Default().Head(), old)
	if err != nil {
		t.Fatal(err)
	}
	pin, err := table.ParsePin("0.1")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvPinned(t, release.NewPinner(table, pin))
	id := e.node(nil)
	e.must(http.StatusCreated, "POST", "/v1/ports", "latest", map[string]any{"node_uuid": id, "address": "52:54:00:00:00:02"})
	for _, c := range []struct{ method, path, ver string }{
		{"GET", "/vifs", "1.28"}, {"POST", "/vifs", "1.28"}, {"PUT", "/management/inject_nmi", "1.29"},
	} {
		r := e.must(http.StatusNotAcceptable, c.method, "/v1/nodes/"+id+c.path, c.ver, map[string]any{"id": "vif-1"})
		if r.Header.Get(HeaderMaxVersion) != "1.26" {
			t.Errorf("%s %s: max header %q", c.method, c.path, r.Header.Get(HeaderMaxVersion))
		}
		e.must(http.StatusNotFound, c.method, "/v1/nodes/"+id+c.path, "latest", map[string]any{"id": "vif-1"})
	}
	if d := cmp.Diff([]string{"create_node", "create_port"}, e.cond.calls); d != "" {
		t.Errorf("conductor calls (-want +got):\n%s", d)
	}
}
