package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func runbookBody(name string) map[string]any {
	return map[string]any{"name": name, "steps": []any{
		map[string]any{"interface": "bios", "step": "apply_configuration", "order": 1,
			"args": map[string]any{"settings": []any{map[string]any{"name": "LogicalProc", "value": "Enabled"}}}},
		map[string]any{"interface": "deploy", "step": "erase_devices", "order": "2"},
	}}
}

// TestV1_92Runbooks: below 1.92 the collection answers as Ironic (GET 404,
// other methods 405); from 1.92 runbooks are created (owner, public,
// disable_ramdisk), listed, shown, patched and deleted with Ironic's
// checks, including its rule that a public runbook has no owner.
func TestV1_92Runbooks(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.92"))
	if got := e.must(http.StatusNotFound, "GET", "/v1/runbooks", "1.91", nil); !strings.Contains(string(got.Body), "The API version does not allow runbooks") {
		t.Errorf("GET @1.91: %s", got.Body)
	}
	e.must(http.StatusMethodNotAllowed, "POST", "/v1/runbooks", "1.91", runbookBody("CUSTOM_A"))
	e.must(http.StatusMethodNotAllowed, "PATCH", "/v1/runbooks/CUSTOM_A", "1.91", []map[string]any{})
	if v1 := e.must(http.StatusOK, "GET", "/v1/", "1.92", nil).JSON(t); v1["runbooks"] == nil {
		t.Error("/v1 does not list runbooks at 1.92")
	}

	owned := runbookBody("CUSTOM_AWESOME")
	owned["owner"], owned["disable_ramdisk"] = "project-a", true
	rb := e.must(http.StatusCreated, "POST", "/v1/runbooks", "1.92", owned).JSON(t)
	want := map[string]any{"name": "CUSTOM_AWESOME", "owner": "project-a", "public": false, "disable_ramdisk": true,
		"extra": map[string]any{}, "updated_at": nil, "steps": []any{
			map[string]any{"interface": "bios", "step": "apply_configuration", "order": float64(1),
				"args": map[string]any{"settings": []any{map[string]any{"name": "LogicalProc", "value": "Enabled"}}}},
			map[string]any{"interface": "deploy", "step": "erase_devices", "order": float64(2), "args": map[string]any{}}}}
	for k, v := range want {
		if d := cmp.Diff(v, rb[k]); d != "" {
			t.Errorf("%s (-want +got):\n%s", k, d)
		}
	}
	pub := runbookBody("CUSTOM_PUBLIC")
	pub["public"] = true
	e.must(http.StatusCreated, "POST", "/v1/runbooks", "1.92", pub)

	list := e.must(http.StatusOK, "GET", "/v1/runbooks", "1.92", nil).JSON(t)["runbooks"].([]any)
	if len(list) != 2 || len(list[0].(map[string]any)) != 3 {
		t.Errorf("default list: %v", list)
	}
	if got := e.must(http.StatusOK, "GET", "/v1/runbooks/CUSTOM_AWESOME?fields=owner", "1.92", nil).JSON(t); got["owner"] != "project-a" || len(got) != 2 {
		t.Errorf("?fields=owner: %v", got)
	}

	// Making a runbook public clears its owner; a public one gets none.
	p := e.must(http.StatusOK, "PATCH", "/v1/runbooks/CUSTOM_AWESOME", "1.92", []map[string]any{{"op": "replace", "path": "/public", "value": true}}).JSON(t)
	if p["public"] != true || p["owner"] != nil {
		t.Errorf("made public: %v", p)
	}
	got := e.must(http.StatusBadRequest, "PATCH", "/v1/runbooks/CUSTOM_AWESOME", "1.92", []map[string]any{{"op": "replace", "path": "/owner", "value": "project-b"}}).Fault(t)
	if want := "Couldn't apply patch '[{'op': 'replace', 'path': '/owner', 'value': 'project-b'}]'. Reason: There cannot be an owner for a public runbook"; got != want {
		t.Errorf("owner of a public runbook: %q", got)
	}
	p = e.must(http.StatusOK, "PATCH", "/v1/runbooks/CUSTOM_AWESOME", "1.92", []map[string]any{
		{"op": "replace", "path": "/public", "value": false}, {"op": "replace", "path": "/owner", "value": "project-b"},
		{"op": "replace", "path": "/steps/1/order", "value": 5}}).JSON(t)
	if p["public"] != false || p["owner"] != "project-b" || p["steps"].([]any)[1].(map[string]any)["order"] != float64(5) {
		t.Errorf("made private with an owner: %v", p)
	}

	for name, tc := range map[string]struct {
		method, path string
		body         any
		code         int
		fault        string
	}{
		"name taken":     {"POST", "/v1/runbooks", runbookBody("CUSTOM_PUBLIC"), 409, "A runbook with name CUSTOM_PUBLIC already exists."},
		"not a trait":    {"POST", "/v1/runbooks", runbookBody("my-runbook"), 400, "Schema error for runbook: 'my-runbook' is not valid under any of the given schemas. Possible root cause: 'my-runbook' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		"no order":       {"POST", "/v1/runbooks", withStep(runbookBody("CUSTOM_X"), "order", nil), 400, "Schema error for runbook: 'order' is a required property"},
		"priority":       {"POST", "/v1/runbooks", withStep(runbookBody("CUSTOM_X"), "priority", 1), 400, "Schema error for runbook: Additional properties are not allowed ('priority' was unexpected)"},
		"public string":  {"POST", "/v1/runbooks", withKey(runbookBody("CUSTOM_X"), "public", "yes"), 400, "Schema error for runbook: 'yes' is not of type 'boolean', 'null'"},
		"owner too long": {"POST", "/v1/runbooks", withKey(runbookBody("CUSTOM_X"), "owner", strings.Repeat("o", 256)), 400, "Schema error for runbook: '" + strings.Repeat("o", 256) + "' is too long"},
		"bad interface":  {"POST", "/v1/runbooks", withStep(runbookBody("CUSTOM_X"), "interface", "network"), 400, "Schema error for runbook: 'network' is not one of ['vendor', 'power', 'management', 'firmware', 'deploy', 'bios', 'raid']"},
		"missing":        {"GET", "/v1/runbooks/CUSTOM_NOPE", nil, 404, "Runbook CUSTOM_NOPE could not be found."},
		"patch uuid":     {"PATCH", "/v1/runbooks/CUSTOM_PUBLIC", []map[string]any{{"op": "remove", "path": "/uuid"}}, 400, "Cannot patch /uuid. Only the following can be updated: disable_ramdisk, extra, name, owner, public, steps"},
		"sort by traits": {"GET", "/v1/runbooks?sort_key=traits", nil, 400, "The sort_key value traits is an invalid field for sorting"},
	} {
		t.Run(name, func(t *testing.T) {
			got := e.must(tc.code, tc.method, tc.path, "1.92", tc.body)
			if f := got.Fault(t); f != tc.fault {
				t.Errorf("fault %q\nwant  %q", f, tc.fault)
			}
		})
	}
	e.must(http.StatusNoContent, "DELETE", "/v1/runbooks/CUSTOM_AWESOME", "1.92", nil)
	e.must(http.StatusNotFound, "DELETE", "/v1/runbooks/CUSTOM_AWESOME", "1.92", nil)
}
