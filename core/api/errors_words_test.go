package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/internal/leakcheck"
)

// TestBadBodiesInPlainWords: every 400 for a malformed or mistyped body
// says what is wrong in words, never with a Go type name or the JSON
// decoder's own text (before: "expected []map[string]json.RawMessage").
func TestBadBodiesInPlainWords(t *testing.T) {
	e := newEnv(t)
	id := e.node(map[string]any{"name": "words", "extra": map[string]any{"list": []any{1}, "s": "x"}})
	node := "/v1/nodes/" + id
	tests := map[string]struct {
		method, path, body, want string
	}{
		"patch, an object":            {"PATCH", node, `{"op":"add"}`, "must be a JSON list of operations"},
		"patch, a string":             {"PATCH", node, `"x"`, "must be a JSON list of operations"},
		"patch, a list of numbers":    {"PATCH", node, `[1,2]`, "each operation must be a JSON object"},
		"patch, a list of lists":      {"PATCH", node, `[[{"op":"add"}]]`, "each operation must be a JSON object"},
		"patch, op a number":          {"PATCH", node, `[{"op":5,"path":"/extra/a","value":1}]`, "'op' must be a string"},
		"patch, path a list":          {"PATCH", node, `[{"op":"add","path":["/extra/a"],"value":1}]`, "'path' must be a string"},
		"patch, malformed":            {"PATCH", node, `[{"op":"add",}]`, "malformed JSON at byte"},
		"patch, incomplete":           {"PATCH", node, `[{"op":"add"`, "incomplete"},
		"patch, empty":                {"PATCH", node, ``, "the body is empty"},
		"patch, ~2":                   {"PATCH", node, `[{"op":"add","path":"/extra/a~2","value":1}]`, "RFC 6901"},
		"patch, into a string":        {"PATCH", node, `[{"op":"add","path":"/extra/s/x","value":1}]`, "Couldn't apply patch"},
		"patch, list index":           {"PATCH", node, `[{"op":"replace","path":"/extra/list/7","value":1}]`, "Couldn't apply patch"},
		"patch, remove missing":       {"PATCH", node, `[{"op":"remove","path":"/extra/nope"}]`, "Couldn't apply patch"},
		"patch, list index a word":    {"PATCH", node, `[{"op":"add","path":"/extra/list/x","value":1}]`, "Couldn't apply patch"},
		"create, a list":              {"POST", "/v1/nodes", `[1]`, "expected an object"},
		"create, malformed":           {"POST", "/v1/nodes", `{"driver":}`, "malformed JSON at byte"},
		"create, driver a number":     {"POST", "/v1/nodes", `{"driver":5}`, "Wrong type"},
		"create, extra a list":        {"POST", "/v1/nodes", `{"driver":"fake-hardware","extra":[1]}`, "Wrong type"},
		"port, address an object":     {"POST", "/v1/ports", `{"node_uuid":"` + id + `","address":{"a":1}}`, "Wrong type"},
		"power, target a list":        {"PUT", node + "/states/power", `{"target":["power on"]}`, ""},
		"provision, target an object": {"PUT", node + "/states/provision", `{"target":{"a":1}}`, ""},
		"vif, id a number":            {"POST", node + "/vifs", `{"id":5}`, ""},
		"boot device, a number":       {"PUT", node + "/management/boot_device", `{"boot_device":5}`, ""},
		"maintenance, reason a list":  {"PUT", node + "/maintenance", `{"reason":["x"]}`, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, "latest", tc.body)
			if r.Code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", r.Code, r.Body)
			}
			f := r.Fault(t)
			if x := leakcheck.GoInternals(f); x != "" {
				t.Errorf("fault shows %q: %s", x, f)
			}
			if !strings.Contains(f, tc.want) {
				t.Errorf("fault %q lacks %q", f, tc.want)
			}
		})
	}
}
