package api

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/inspectrules"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/test/testenv"
)

func ruleBody() map[string]any {
	return map[string]any{
		"description": "BMC credentials", "priority": 100, "sensitive": false,
		"conditions": []any{map[string]any{"op": "contains", "args": map[string]any{"value": "{inventory[system_vendor][manufacturer]}", "regex": "(?i)dell"}},
			map[string]any{"op": "!is-empty", "args": map[string]any{"value": "{item}"}, "loop": []any{"a"}}},
		"actions": []any{map[string]any{"op": "set-attribute", "args": map[string]any{"path": "/driver_info/redfish_address", "value": "https://{inventory[bmc_address]}"}}},
	}
}

// TestV1_96InspectionRules: /v1/inspection_rules as Ironic's controller:
// 404 (GET) and 405 below 1.96; create (201, Location), show, list
// (uuid, priority, phase, description by default; ?detail, ?fields,
// ?phase), PATCH, DELETE; a sensitive rule hides its conditions and
// actions and cannot be made insensitive; Ironic's validation messages.
func TestV1_96InspectionRules(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.96"))
	if got := e.must(http.StatusNotFound, "GET", "/v1/inspection_rules", "1.95", nil); !strings.Contains(string(got.Body), "The API version does not allow inspection rules") {
		t.Errorf("GET @1.95: %s", got.Body)
	}
	e.must(http.StatusMethodNotAllowed, "POST", "/v1/inspection_rules", "1.95", ruleBody())
	e.must(http.StatusMethodNotAllowed, "DELETE", "/v1/inspection_rules/783bf33a-a8e3-1e23-a645-1e95a1f95186", "1.95", nil)
	if v1 := e.must(http.StatusOK, "GET", "/v1/", "1.96", nil).JSON(t); v1["inspection_rules"] == nil {
		t.Error("/v1 does not list inspection_rules at 1.96")
	}
	if v1 := e.must(http.StatusOK, "GET", "/v1/", "1.95", nil).JSON(t); v1["inspection_rules"] != nil {
		t.Error("/v1 lists inspection_rules at 1.95")
	}

	created := e.must(http.StatusCreated, "POST", "/v1/inspection_rules", "1.96", ruleBody())
	rule := created.JSON(t)
	id, _ := rule["uuid"].(string)
	if loc := created.Header.Get("Location"); !strings.HasSuffix(loc, "/v1/inspection_rules/"+id) {
		t.Errorf("Location %q", loc)
	}
	if rule["phase"] != "main" || rule["priority"] != float64(100) || rule["sensitive"] != false || rule["updated_at"] != nil {
		t.Errorf("created: %v", rule)
	}
	conds := rule["conditions"].([]any)
	if c := conds[1].(map[string]any); c["multiple"] != "any" || c["op"] != "!is-empty" {
		t.Errorf("a looping condition shows multiple (any by default): %v", c)
	}
	if _, has := conds[0].(map[string]any)["multiple"]; has {
		t.Errorf("a condition without loop shows no multiple: %v", conds[0])
	}
	sens := ruleBody()
	sens["sensitive"], sens["uuid"], sens["priority"] = true, "783bf33a-a8e3-1e23-a645-1e95a1f95186", 5
	s := e.must(http.StatusCreated, "POST", "/v1/inspection_rules", "1.96", sens).JSON(t)
	if s["conditions"] != nil || s["actions"] != nil {
		t.Errorf("a sensitive rule shows its conditions or actions: %v", s)
	}
	e.must(http.StatusConflict, "POST", "/v1/inspection_rules", "1.96", sens)

	list := e.must(http.StatusOK, "GET", "/v1/inspection_rules", "1.96", nil).JSON(t)["inspection_rules"].([]any)
	if len(list) != 2 || len(list[0].(map[string]any)) != 5 { // uuid, priority, phase, description, links
		t.Errorf("default list: %v", list)
	}
	detail := e.must(http.StatusOK, "GET", "/v1/inspection_rules?detail=True", "1.96", nil).JSON(t)["inspection_rules"].([]any)
	if d := detail[1].(map[string]any); d["actions"] != nil || d["sensitive"] != true {
		t.Errorf("detailed list shows a sensitive rule's actions: %v", d)
	}
	if got := e.must(http.StatusOK, "GET", "/v1/inspection_rules/"+id+"?fields=priority", "1.96", nil).JSON(t); len(got) != 2 || got["priority"] != float64(100) {
		t.Errorf("?fields=priority: %v", got)
	}
	e.must(http.StatusBadRequest, "GET", "/v1/inspection_rules?sort_key=actions", "1.96", nil)
	e.must(http.StatusBadRequest, "GET", "/v1/inspection_rules?fields=nope", "1.96", nil)
	if l := e.must(http.StatusOK, "GET", "/v1/inspection_rules?phase=other", "1.96", nil).JSON(t)["inspection_rules"].([]any); len(l) != 0 {
		t.Errorf("?phase=other: %v", l)
	}
	e.must(http.StatusNotFound, "GET", "/v1/inspection_rules/0b1e5d2c-0000-4000-8000-000000000000", "1.96", nil)
	e.must(http.StatusBadRequest, "GET", "/v1/inspection_rules/not-a-uuid", "1.96", nil)

	p := e.must(http.StatusOK, "PATCH", "/v1/inspection_rules/"+id, "1.96", []map[string]any{
		{"op": "replace", "path": "/priority", "value": 7}, {"op": "remove", "path": "/conditions"},
		{"op": "add", "path": "/actions/-", "value": map[string]any{"op": "add-trait", "args": map[string]any{"name": "CUSTOM_DELL"}}}}).JSON(t)
	if p["priority"] != float64(7) || len(p["conditions"].([]any)) != 0 || len(p["actions"].([]any)) != 2 || p["updated_at"] == nil {
		t.Errorf("patched: %v", p)
	}
	if got := e.must(http.StatusBadRequest, "PATCH", "/v1/inspection_rules/"+sens["uuid"].(string), "1.96",
		[]map[string]any{{"op": "replace", "path": "/sensitive", "value": false}}); !strings.Contains(string(got.Body), "Inspection rules cannot have the sensitive flag unset.") {
		t.Errorf("unset sensitive: %s", got.Body)
	}
	e.must(http.StatusBadRequest, "PATCH", "/v1/inspection_rules/"+id, "1.96", []map[string]any{{"op": "replace", "path": "/priority", "value": 10000}})

	for _, c := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"actions": []any{}}, "Schema error: [] should be non-empty"},
		{map[string]any{"conditions": []any{}}, "Schema error: 'actions' is a required property"},
		{map[string]any{"actions": []any{map[string]any{"op": "api-call", "args": map[string]any{"url": "http://x"}}}}, "Schema error: 'api-call' is not one of ['fail', "},
		{map[string]any{"actions": []any{map[string]any{"op": "add-trait", "args": map[string]any{}}}}, "Inspection rule validation failed. Reason: missing required argument(s): name"},
		{map[string]any{"priority": -1, "actions": []any{map[string]any{"op": "log", "args": map[string]any{"msg": "m"}}}}, "Schema error: -1 is less than the minimum of 0"},
		{map[string]any{"phase": "early", "actions": []any{map[string]any{"op": "log", "args": map[string]any{"msg": "m"}}}}, "Invalid phase: early. Valid phases are: main"},
		{map[string]any{"scope": "x", "actions": []any{map[string]any{"op": "log", "args": map[string]any{"msg": "m"}}}}, "Additional properties are not allowed ('scope' was unexpected)"},
	} {
		if got := e.must(http.StatusBadRequest, "POST", "/v1/inspection_rules", "1.96", c.body); !strings.Contains(string(got.Body), c.want) {
			t.Errorf("%v: %s, want %q", c.body, got.Body, c.want)
		}
	}

	e.must(http.StatusNoContent, "DELETE", "/v1/inspection_rules/"+id, "1.96", nil)
	e.must(http.StatusNotFound, "DELETE", "/v1/inspection_rules/"+id, "1.96", nil)
}

// TestPinnedInspectionRules: pinned to release 0.2 the rules are 406 from
// the microversion check, whatever the test cap.
func TestPinnedInspectionRules(t *testing.T) {
	old, ok := release.Default().Lookup("0.2")
	if !ok {
		t.Fatal("no release 0.2")
	}
	e := newEnvPinned(t, release.NewPinner(release.Default(), release.Pin{Mode: release.PinRelease, Release: old}), withMaxAPI("1.110"))
	e.must(http.StatusNotAcceptable, "GET", "/v1/inspection_rules", "1.96", nil)
	e.must(http.StatusNotAcceptable, "POST", "/v1/inspection_rules", "1.96", ruleBody())
	e.must(http.StatusNotFound, "GET", "/v1/inspection_rules", "latest", nil)
}

// TestRBACInspectionRules: Ironic's policies: reading rules needs the
// system reader role, writing them the system admin role.
func TestRBACInspectionRules(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.96"), func(d *Deps) { d.Auth, d.Projects = anyPassword{}, rbacUsers })
	e.asMust(http.StatusOK, "sysread", "GET", "/v1/inspection_rules", "1.96", nil)
	e.asMust(http.StatusForbidden, "p1admin", "GET", "/v1/inspection_rules", "1.96", nil)
	if r := e.asMust(http.StatusForbidden, "sysmem", "POST", "/v1/inspection_rules", "1.96", ruleBody()); !strings.Contains(string(r.Body), "baremetal:inspection_rule:create") {
		t.Errorf("sysmem create: %s", r.Body)
	}
	id := e.asMust(http.StatusCreated, "root", "POST", "/v1/inspection_rules", "1.96", ruleBody()).JSON(t)["uuid"].(string)
	e.asMust(http.StatusOK, "sysread", "GET", "/v1/inspection_rules/"+id, "1.96", nil)
	e.asMust(http.StatusForbidden, "sysmem", "PATCH", "/v1/inspection_rules/"+id, "1.96", []map[string]any{{"op": "replace", "path": "/priority", "value": 1}})
	e.asMust(http.StatusForbidden, "sysmem", "DELETE", "/v1/inspection_rules/"+id, "1.96", nil)
	e.asMust(http.StatusNoContent, "root", "DELETE", "/v1/inspection_rules/"+id, "1.96", nil)
}

// TestInspectionDocExamples: every JSON rule in docs/admin/inspection.md
// is created through the API as it stands, and every YAML block parses
// as built-in rules.
func TestInspectionDocExamples(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "admin", "inspection.md"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, withMaxAPI("1.96"))
	blocks := map[string]int{}
	for _, part := range strings.Split(string(data), "```")[1:] {
		lang, body, _ := strings.Cut(part, "\n")
		switch lang {
		case "json":
			var doc map[string]any
			if err := json.Unmarshal([]byte(body), &doc); err != nil {
				t.Fatalf("a JSON example does not parse: %v\n%s", err, body)
			}
			e.must(http.StatusCreated, "POST", "/v1/inspection_rules", "1.96", doc)
		case "yaml":
			rules, err := inspectrules.ParseBuiltIn([]byte(body), "inspection.md")
			if err != nil || len(rules) == 0 {
				t.Fatalf("a YAML example: %v %v\n%s", rules, err, body)
			}
		default:
			continue
		}
		blocks[lang]++
	}
	if blocks["json"] == 0 || blocks["yaml"] == 0 {
		t.Errorf("examples found: %v, want JSON and YAML ones", blocks)
	}
}
