package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestSchemaIntegralNumberIsInteger: Ironic's schemas name no $schema, so
// jsonschema checks them by its latest draft, where a number with no
// fractional part (1.0) is an integer. Each resource's integer field takes
// 1.0 and stores 1 (Ironic's columns are integers); 1.5 stays refused.
func TestSchemaIntegralNumberIsInteger(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.92"))
	id := e.node(map[string]any{"name": "n1"})
	for name, tc := range map[string]struct {
		ver, path, field string
		body             func(n json.RawMessage) map[string]any
		wantFraction     string
	}{
		"deploy template priority": {"1.55", "/v1/deploy_templates", "priority",
			func(n json.RawMessage) map[string]any {
				return withStep(templateBody("CUSTOM_P"+string(n[0])), "priority", n)
			},
			"Schema error for template: 1.5 is not valid under any of the given schemas. Possible root cause: 1.5 is not of type 'integer'"},
		"runbook order": {"1.92", "/v1/runbooks", "order",
			func(n json.RawMessage) map[string]any {
				b := runbookBody("CUSTOM_O" + string(n[0]))
				b["steps"].([]any)[0].(map[string]any)["order"] = n
				return b
			},
			"Schema error for runbook: 1.5 is not valid under any of the given schemas. Possible root cause: 1.5 is not of type 'integer'"},
		"volume target boot_index": {"1.32", "/v1/volume/targets", "boot_index",
			func(n json.RawMessage) map[string]any {
				return map[string]any{"node_uuid": id, "volume_type": "iscsi", "boot_index": n, "volume_id": "vol-" + string(n[0])}
			},
			"Schema error for target: 1.5 is not of type 'integer'"},
	} {
		got := e.must(http.StatusCreated, "POST", tc.path, tc.ver, tc.body(json.RawMessage("1.0")))
		if !strings.Contains(string(got.Body), `"`+tc.field+`":1,`) && !strings.Contains(string(got.Body), `"`+tc.field+`":1}`) {
			t.Errorf("%s: 1.0 created %s, want %s 1", name, got.Body, tc.field)
		}
		if msg := e.must(http.StatusBadRequest, "POST", tc.path, tc.ver, tc.body(json.RawMessage("1.5"))).Fault(t); msg != tc.wantFraction {
			t.Errorf("%s: 1.5 refused with %q, want %q", name, msg, tc.wantFraction)
		}
	}
}
