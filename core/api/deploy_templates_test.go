package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func templateBody(name string) map[string]any {
	return map[string]any{"name": name, "extra": map[string]any{"foo": "bar"}, "steps": []any{
		map[string]any{"interface": "bios", "step": "apply_configuration", "priority": 150,
			"args": map[string]any{"settings": []any{map[string]any{"name": "LogicalProc", "value": "Enabled"}}}},
	}}
}

// TestV1_55DeployTemplates: below 1.55 the collection answers as Ironic
// (GET 404, other methods 405); from 1.55 deploy templates are created,
// listed (default, detail, fields, paged), shown by UUID or name, patched
// and deleted with Ironic's validation and messages.
func TestV1_55DeployTemplates(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.55"))
	below := e.must(http.StatusNotFound, "GET", "/v1/deploy_templates", "1.54", nil)
	if !strings.Contains(string(below.Body), "The API version does not allow deploy templates") {
		t.Errorf("GET @1.54: %s", below.Body)
	}
	e.must(http.StatusMethodNotAllowed, "POST", "/v1/deploy_templates", "1.54", templateBody("CUSTOM_A"))
	e.must(http.StatusNotFound, "GET", "/v1/deploy_templates/CUSTOM_A", "1.54", nil)
	e.must(http.StatusMethodNotAllowed, "DELETE", "/v1/deploy_templates/CUSTOM_A", "1.54", nil)
	if v1 := e.must(http.StatusOK, "GET", "/v1/", "1.54", nil).JSON(t); v1["deploy_templates"] != nil {
		t.Error("/v1 lists deploy_templates at 1.54")
	}
	if v1 := e.must(http.StatusOK, "GET", "/v1/", "1.55", nil).JSON(t); v1["deploy_templates"] == nil {
		t.Error("/v1 does not list deploy_templates at 1.55")
	}

	body := templateBody("CUSTOM_HYPERTHREADING_ON")
	body["uuid"] = "bbb45f41-d4bc-4307-8d1d-32f95ce1e920"
	body["steps"].([]any)[0].(map[string]any)["args"].(map[string]any)["password"] = "hunter2"
	r := e.must(http.StatusCreated, "POST", "/v1/deploy_templates", "1.55", body)
	if loc := r.Header.Get("Location"); loc != "http://rivet.test/v1/deploy_templates/bbb45f41-d4bc-4307-8d1d-32f95ce1e920" {
		t.Errorf("Location %q", loc)
	}
	created := r.JSON(t)
	keys := make([]string, 0, len(created))
	for k := range created {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if d := cmp.Diff([]string{"created_at", "extra", "links", "name", "steps", "updated_at", "uuid"}, keys); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
	wantSteps := []any{map[string]any{"interface": "bios", "step": "apply_configuration", "priority": float64(150),
		"args": map[string]any{"password": "******", "settings": []any{map[string]any{"name": "LogicalProc", "value": "Enabled"}}}}}
	if d := cmp.Diff(wantSteps, created["steps"]); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if created["updated_at"] != nil {
		t.Errorf("updated_at %v", created["updated_at"])
	}
	str := templateBody("CUSTOM_B")
	str["steps"].([]any)[0].(map[string]any)["priority"] = "042"
	if got := e.must(http.StatusCreated, "POST", "/v1/deploy_templates", "1.55", str).JSON(t)["steps"].([]any)[0].(map[string]any)["priority"]; got != float64(42) {
		t.Errorf("string priority stored as %v", got)
	}

	list := e.must(http.StatusOK, "GET", "/v1/deploy_templates", "1.55", nil).JSON(t)["deploy_templates"].([]any)
	if len(list) != 2 || len(list[0].(map[string]any)) != 3 || list[0].(map[string]any)["name"] != "CUSTOM_HYPERTHREADING_ON" {
		t.Errorf("default list: %v", list)
	}
	detail := e.must(http.StatusOK, "GET", "/v1/deploy_templates?detail=True", "1.55", nil).JSON(t)["deploy_templates"].([]any)
	if _, ok := detail[0].(map[string]any)["steps"]; !ok {
		t.Errorf("detail list: %v", detail)
	}
	fields := e.must(http.StatusOK, "GET", "/v1/deploy_templates?fields=uuid,steps", "1.55", nil).JSON(t)["deploy_templates"].([]any)
	if len(fields[0].(map[string]any)) != 3 {
		t.Errorf("?fields=uuid,steps: %v", fields[0])
	}
	page := e.must(http.StatusOK, "GET", "/v1/deploy_templates?limit=1", "1.55", nil).JSON(t)
	if next, _ := page["next"].(string); !strings.Contains(next, "/v1/deploy_templates?") || !strings.Contains(next, "marker=bbb45f41") {
		t.Errorf("next %q", page["next"])
	}
	byName := e.must(http.StatusOK, "GET", "/v1/deploy_templates/CUSTOM_HYPERTHREADING_ON?fields=name,steps", "1.55", nil).JSON(t)
	if len(byName) != 3 || byName["name"] != "CUSTOM_HYPERTHREADING_ON" {
		t.Errorf("by name with fields: %v", byName)
	}

	patched := e.must(http.StatusOK, "PATCH", "/v1/deploy_templates/CUSTOM_B", "1.55", []map[string]any{
		{"op": "replace", "path": "/name", "value": "CUSTOM_C"},
		{"op": "add", "path": "/steps/-", "value": map[string]any{"interface": "raid", "step": "create_configuration", "args": map[string]any{}, "priority": 10}},
		{"op": "add", "path": "/extra/k", "value": "v"},
	}).JSON(t)
	if patched["name"] != "CUSTOM_C" || len(patched["steps"].([]any)) != 2 || patched["updated_at"] == nil {
		t.Errorf("patched: %v", patched)
	}
	e.must(http.StatusNotFound, "GET", "/v1/deploy_templates/CUSTOM_B", "1.55", nil)

	for name, tc := range map[string]struct {
		method, path string
		body         any
		code         int
		fault        string
	}{
		"name taken":       {"POST", "/v1/deploy_templates", templateBody("CUSTOM_C"), 409, "A deploy template with name CUSTOM_C already exists."},
		"uuid taken":       {"POST", "/v1/deploy_templates", withKey(templateBody("CUSTOM_D"), "uuid", "bbb45f41-d4bc-4307-8d1d-32f95ce1e920"), 409, "A deploy template with UUID bbb45f41-d4bc-4307-8d1d-32f95ce1e920 already exists."},
		"not a trait":      {"POST", "/v1/deploy_templates", templateBody("not-a-trait"), 400, "Schema error for template: 'not-a-trait' is not valid under any of the given schemas. Possible root cause: 'not-a-trait' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		"name too long":    {"POST", "/v1/deploy_templates", templateBody("CUSTOM_" + strings.Repeat("X", 249)), 400, "Schema error for template: 'CUSTOM_" + strings.Repeat("X", 249) + "' is too long"},
		"name a number":    {"POST", "/v1/deploy_templates", withKey(templateBody(""), "name", 42), 400, "Schema error for template: 42 is not of type 'string'"},
		"name null":        {"POST", "/v1/deploy_templates", withKey(templateBody(""), "name", nil), 400, "Schema error for template: None is not of type 'string'"},
		"no name":          {"POST", "/v1/deploy_templates", without(templateBody("CUSTOM_E"), "name"), 400, "Schema error for template: 'name' is a required property"},
		"no steps":         {"POST", "/v1/deploy_templates", without(templateBody("CUSTOM_E"), "steps"), 400, "Schema error for template: 'steps' is a required property"},
		"steps an object":  {"POST", "/v1/deploy_templates", withKey(templateBody("CUSTOM_E"), "steps", map[string]any{}), 400, "Schema error for template: {} is not of type 'array'"},
		"steps empty":      {"POST", "/v1/deploy_templates", withKey(templateBody("CUSTOM_E"), "steps", []any{}), 400, "Schema error for template: [] should be non-empty"},
		"extra a number":   {"POST", "/v1/deploy_templates", withKey(templateBody("CUSTOM_E"), "extra", 42), 400, "Schema error for template: 42 is not of type 'object', 'null'"},
		"unknown field":    {"POST", "/v1/deploy_templates", withKey(templateBody("CUSTOM_E"), "foo", "bar"), 400, "Schema error for template: Additional properties are not allowed ('foo' was unexpected)"},
		"bad uuid":         {"POST", "/v1/deploy_templates", withKey(templateBody("CUSTOM_E"), "uuid", "nope"), 400, "Expected UUID for uuid: nope"},
		"step no args":     {"POST", "/v1/deploy_templates", withStep(templateBody("CUSTOM_E"), "args", nil), 400, "Schema error for template: 'args' is a required property"},
		"step interface":   {"POST", "/v1/deploy_templates", withStep(templateBody("CUSTOM_E"), "interface", "foo"), 400, "Schema error for template: 'foo' is not one of ['vendor', 'power', 'management', 'firmware', 'deploy', 'bios', 'raid']"},
		"step interface 2": {"POST", "/v1/deploy_templates", withStep(templateBody("CUSTOM_E"), "interface", []any{3}), 400, "Schema error for template: [3] is not of type 'string'"},
		"step name":        {"POST", "/v1/deploy_templates", withStep(templateBody("CUSTOM_E"), "step", 42), 400, "Schema error for template: 42 is not of type 'string'"},
		"step args":        {"POST", "/v1/deploy_templates", withStep(templateBody("CUSTOM_E"), "args", "not a dict"), 400, "Schema error for template: 'not a dict' is not of type 'object'"},
		"negative priority": {"POST", "/v1/deploy_templates", withStep(templateBody("CUSTOM_E"), "priority", -1), 400,
			"Schema error for template: -1 is not valid under any of the given schemas. Possible root cause: -1 is less than the minimum of 0"},
		"word priority": {"POST", "/v1/deploy_templates", withStep(templateBody("CUSTOM_E"), "priority", "not a number"), 400,
			"Schema error for template: 'not a number' is not valid under any of the given schemas. Possible root cause: 'not a number' does not match '^[0-9]+$'"},
		"step extra key": {"POST", "/v1/deploy_templates", withStep(templateBody("CUSTOM_E"), "foo", "bar"), 400, "Schema error for template: Additional properties are not allowed ('foo' was unexpected)"},
		"duplicate steps": {"POST", "/v1/deploy_templates", withKey(templateBody("CUSTOM_E"), "steps", []any{
			map[string]any{"interface": "raid", "step": "create_configuration", "args": map[string]any{"foo": "0"}, "priority": 0},
			map[string]any{"interface": "raid", "step": "create_configuration", "args": map[string]any{"foo": "1"}, "priority": 1}}), 400,
			"Deploy template invalid: Duplicate deploy steps. A template cannot have multiple deploy steps with the same interface and step. Duplicates: interface: raid, step: create_configuration."},
		"missing":           {"GET", "/v1/deploy_templates/CUSTOM_NOPE", nil, 404, "Deploy template CUSTOM_NOPE could not be found."},
		"bad ident":         {"GET", "/v1/deploy_templates/a%20b", nil, 400, "Expected UUID or name for template_ident: a b"},
		"unknown field get": {"GET", "/v1/deploy_templates/CUSTOM_C?fields=uuid,spongebob", nil, 400, `Field(s) "spongebob" are not valid`},
		"detail and fields": {"GET", "/v1/deploy_templates?detail=True&fields=uuid", nil, 400, "Can not specify ?detail=True and fields in the same request."},
		"sort by steps":     {"GET", "/v1/deploy_templates?sort_key=steps", nil, 400, "The sort_key value steps is an invalid field for sorting"},
		"patch uuid":        {"PATCH", "/v1/deploy_templates/CUSTOM_C", []map[string]any{{"op": "replace", "path": "/uuid", "value": "bbb45f41-d4bc-4307-8d1d-32f95ce1e921"}}, 400, "Cannot patch /uuid. Only the following can be updated: extra, name, steps, description"},
		"patch name taken":  {"PATCH", "/v1/deploy_templates/CUSTOM_C", []map[string]any{{"op": "replace", "path": "/name", "value": "CUSTOM_HYPERTHREADING_ON"}}, 409, "A deploy template with name CUSTOM_HYPERTHREADING_ON already exists."},
		"patch bad name":    {"PATCH", "/v1/deploy_templates/CUSTOM_C", []map[string]any{{"op": "replace", "path": "/name", "value": "aB"}}, 400, "Schema error for patch: 'aB' is not valid under any of the given schemas. Possible root cause: 'aB' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		"patch no steps":    {"PATCH", "/v1/deploy_templates/CUSTOM_C", []map[string]any{{"op": "remove", "path": "/steps"}}, 400, "Schema error for patch: 'steps' is a required property"},
		"patch step iface":  {"PATCH", "/v1/deploy_templates/CUSTOM_C", []map[string]any{{"op": "replace", "path": "/steps/0/interface", "value": "foo"}}, 400, "Schema error for patch: 'foo' is not one of ['vendor', 'power', 'management', 'firmware', 'deploy', 'bios', 'raid']"},
		"patch only step":   {"PATCH", "/v1/deploy_templates/CUSTOM_HYPERTHREADING_ON", []map[string]any{{"op": "remove", "path": "/steps/0"}}, 400, "Schema error for patch: [] should be non-empty"},
		"patch add root":    {"PATCH", "/v1/deploy_templates/CUSTOM_C", []map[string]any{{"op": "add", "path": "/foo", "value": "bar"}}, 400, "Cannot patch /foo. Only the following can be updated: extra, name, steps, description"},
	} {
		t.Run(name, func(t *testing.T) {
			got := e.must(tc.code, tc.method, tc.path, "1.55", tc.body)
			if tc.fault != "" {
				if f := got.Fault(t); f != tc.fault {
					t.Errorf("fault %q\nwant  %q", f, tc.fault)
				}
			}
		})
	}

	e.must(http.StatusNoContent, "DELETE", "/v1/deploy_templates/CUSTOM_C", "1.55", nil)
	e.must(http.StatusNoContent, "DELETE", "/v1/deploy_templates/bbb45f41-d4bc-4307-8d1d-32f95ce1e920", "1.55", nil)
	if got := e.must(http.StatusOK, "GET", "/v1/deploy_templates", "1.55", nil).JSON(t)["deploy_templates"].([]any); len(got) != 0 {
		t.Errorf("after deletes: %v", got)
	}
}

func withKey(m map[string]any, k string, v any) map[string]any {
	m[k] = v
	return m
}

func without(m map[string]any, k string) map[string]any {
	delete(m, k)
	return m
}

// withStep sets (or, with nil, removes) a key of the body's first step.
func withStep(m map[string]any, k string, v any) map[string]any {
	st := m["steps"].([]any)[0].(map[string]any)
	if v == nil {
		delete(st, k)
	} else {
		st[k] = v
	}
	return m
}
