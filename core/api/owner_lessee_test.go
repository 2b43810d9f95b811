package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// listUUIDs returns the uuids of a node list response.
func respUUIDs(t *testing.T, r resp) []string {
	t.Helper()
	got := []string{}
	for _, n := range r.JSON(t)["nodes"].([]any) {
		got = append(got, n.(map[string]any)["uuid"].(string))
	}
	return got
}

// TestV1_50NodeOwner: owner is shown, settable on create and PATCH, and a
// list filter from 1.50; at 1.49 it is hidden, and POST, PATCH, ?fields=
// and ?owner= naming it are 406, as Ironic answers.
func TestV1_50NodeOwner(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.80"))
	a := e.node(nil)
	e.must(http.StatusNotAcceptable, "POST", "/v1/nodes", "1.49", map[string]any{"driver": "fake-hardware", "owner": "p1"})
	r := e.must(http.StatusCreated, "POST", "/v1/nodes", "1.50", map[string]any{"driver": "fake-hardware", "owner": "p1"})
	b := r.JSON(t)["uuid"].(string)
	if got := r.JSON(t)["owner"]; got != "p1" {
		t.Fatalf("created owner = %v", got)
	}
	if _, ok := e.must(200, "GET", "/v1/nodes/"+b, "1.49", nil).JSON(t)["owner"]; ok {
		t.Error("owner shown at 1.49")
	}
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes/"+b+"?fields=owner", "1.49", nil)
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes?owner=p1", "1.49", nil)
	if f := e.must(http.StatusNotAcceptable, "GET", "/v1/nodes/detail?owner=p1", "1.49", nil).Fault(t); !strings.Contains(f, "1.50") {
		t.Errorf("406 says %q, want the version needed", f)
	}
	e.must(http.StatusNotAcceptable, "PATCH", "/v1/nodes/"+a, "1.49", []map[string]any{{"op": "add", "path": "/owner", "value": "p2"}})
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+a, "1.50", []map[string]any{{"op": "add", "path": "/owner", "value": "p2"}})
	if got := e.must(200, "GET", "/v1/nodes/"+a+"?fields=owner", "1.50", nil).JSON(t)["owner"]; got != "p2" {
		t.Fatalf("owner after PATCH = %v", got)
	}
	if d := cmp.Diff([]string{b}, respUUIDs(t, e.must(200, "GET", "/v1/nodes?owner=p1", "1.50", nil))); d != "" {
		t.Errorf("?owner=p1 (-want +got):\n%s", d)
	}
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+a, "1.50", []map[string]any{{"op": "remove", "path": "/owner"}})
	if got := e.must(200, "GET", "/v1/nodes/"+a, "1.50", nil).JSON(t)["owner"]; got != nil {
		t.Fatalf("owner after remove = %v", got)
	}
	long := strings.Repeat("x", 256)
	e.must(http.StatusBadRequest, "POST", "/v1/nodes", "1.50", map[string]any{"driver": "fake-hardware", "owner": long})
}

// TestV1_65NodeLessee: lessee as owner, from 1.65.
func TestV1_65NodeLessee(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.80"))
	e.node(nil)
	e.must(http.StatusNotAcceptable, "POST", "/v1/nodes", "1.64", map[string]any{"driver": "fake-hardware", "lessee": "p1"})
	b := e.must(http.StatusCreated, "POST", "/v1/nodes", "1.65", map[string]any{"driver": "fake-hardware", "lessee": "p1"}).JSON(t)["uuid"].(string)
	n := e.must(200, "GET", "/v1/nodes/"+b, "1.64", nil).JSON(t)
	if _, ok := n["lessee"]; ok {
		t.Error("lessee shown at 1.64")
	}
	if _, ok := n["owner"]; !ok {
		t.Error("owner hidden at 1.64")
	}
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes?lessee=p1", "1.64", nil)
	e.must(http.StatusNotAcceptable, "PATCH", "/v1/nodes/"+b, "1.64", []map[string]any{{"op": "replace", "path": "/lessee", "value": "p2"}})
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+b, "1.65", []map[string]any{{"op": "replace", "path": "/lessee", "value": "p2"}})
	if d := cmp.Diff([]string{b}, respUUIDs(t, e.must(200, "GET", "/v1/nodes?lessee=p2", "1.65", nil))); d != "" {
		t.Errorf("?lessee=p2 (-want +got):\n%s", d)
	}
	if got := respUUIDs(t, e.must(200, "GET", "/v1/nodes?lessee=p1", "1.65", nil)); len(got) != 0 {
		t.Errorf("?lessee=p1 after the change: %v", got)
	}
}
