package inspectrules

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

type fakeTarget struct{ fields map[string]any }

func (f *fakeTarget) Fields() map[string]any { return f.fields }
func (f *fakeTarget) Set(k string, v any) error {
	if _, ok := f.fields[k]; !ok {
		return fmt.Errorf("no field %s", k)
	}
	f.fields[k] = v
	return nil
}
func (f *fakeTarget) Reset(k string) error { f.fields[k] = nil; return nil }

type fakeEnv struct {
	node   *fakeTarget
	ports  map[string]*fakeTarget
	traits []string
	logs   []string
}

func (e *fakeEnv) Node() Target { return e.node }
func (e *fakeEnv) Port(id string) (Target, error) {
	if p, ok := e.ports[id]; ok {
		return p, nil
	}
	return nil, &ExecError{Msg: "Port " + id + " could not be found."}
}
func (e *fakeEnv) AddTrait(n string) error { e.traits = append(e.traits, n); return nil }
func (e *fakeEnv) RemoveTrait(n string) (bool, error) {
	i := slices.Index(e.traits, n)
	if i < 0 {
		return false, nil
	}
	e.traits = slices.Delete(e.traits, i, i+1)
	return true, nil
}
func (e *fakeEnv) Log(level, msg string) { e.logs = append(e.logs, level+": "+msg) }

func newEnv() *fakeEnv {
	return &fakeEnv{
		node: &fakeTarget{fields: map[string]any{"uuid": "n-1", "driver": "ipmi", "maintenance": false,
			"properties": map[string]any{"capabilities": "boot_mode:uefi"}, "driver_info": map[string]any{"ipmi_password": "s3cret"},
			"extra": map[string]any{}}},
		ports: map[string]*fakeTarget{"p-1": {fields: map[string]any{"uuid": "p-1", "extra": map[string]any{}, "physical_network": nil}}},
	}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func rule(t *testing.T, s string) Rule {
	t.Helper()
	doc := decode(t, s)
	if err := Validate(doc, false); err != nil {
		t.Fatalf("rule refused: %v", err)
	}
	p, _ := Int(doc["priority"])
	return Rule{UUID: "r", Priority: p, Conditions: maps(doc["conditions"]), Actions: maps(doc["actions"])}
}

var inventory = `{"cpu": {"count": 8, "architecture": "x86_64", "flags": ["vmx", "sse"]},
	"memory": {"physical_mb": 16384}, "bmc_address": "192.0.2.10",
	"interfaces": [{"name": "eth0", "mac_address": "52:54:00:aa:bb:cc", "ipv4_address": "10.0.0.5"}],
	"system_vendor": {"manufacturer": "Dell Inc.", "product_name": "R640"},
	"secrets": {"bmc_password": "hunter2"}}`

// TestOperators: every condition operator, inverted, with loops and
// multiple, on interpolated inventory values.
func TestOperators(t *testing.T) {
	inv := decode(t, inventory)
	cases := []struct {
		cond string
		want bool
	}{
		{`{"op": "eq", "args": {"values": ["{inventory[cpu][count]}", "8"]}}`, true},
		{`{"op": "eq", "args": {"values": ["{inventory[cpu][count]}", 8]}}`, false}, // str "8" != int 8, as Python
		{`{"op": "eq", "args": [[1, 1.0, true]]}`, true},
		{`{"op": "!eq", "args": {"values": ["a", "b"]}}`, true},
		{`{"op": "gt", "args": {"values": [3, 2, 1]}}`, true},
		{`{"op": "lt", "args": {"values": ["a", "b"]}}`, true},
		{`{"op": "is-empty", "args": {"value": "{inventory[nothing]}"}}`, true},
		{`{"op": "is-empty", "args": {"value": "{inventory[cpu][flags]}"}}`, false},
		{`{"op": "in-net", "args": {"address": "{inventory[interfaces][0][ipv4_address]}", "subnet": "10.0.0.0/24"}}`, true},
		{`{"op": "in-net", "args": {"address": "{inventory[bmc_address]}", "subnet": "10.0.0.0/24"}}`, false},
		{`{"op": "matches", "args": {"value": "{inventory[system_vendor][manufacturer]}", "regex": "Dell.*"}}`, true},
		{`{"op": "matches", "args": {"value": "{inventory[system_vendor][manufacturer]}", "regex": "Dell"}}`, false},
		{`{"op": "contains", "args": {"value": "{inventory[system_vendor][manufacturer]}", "regex": "(?i)dell"}}`, true},
		{`{"op": "one-of", "args": {"value": "{inventory[cpu][architecture]}", "values": ["aarch64", "x86_64"]}}`, true},
		{`{"op": "is-none", "args": {"value": null}}`, true},
		{`{"op": "is-true", "args": {"value": "{node.driver_info[ipmi_password]}"}}`, false},
		{`{"op": "is-false", "args": {"value": "{node.maintenance}"}}`, true},
		{`{"op": "contains", "args": {"value": "{item}", "regex": "vmx"}, "loop": ["{inventory[cpu][flags]}"]}`, true},
		{`{"op": "eq", "args": {"values": ["{item}", "sse"]}, "loop": ["vmx", "sse"], "multiple": "all"}`, false},
		{`{"op": "eq", "args": {"values": ["{item}", "sse"]}, "loop": ["vmx", "sse"], "multiple": "any"}`, true},
		{`{"op": "eq", "args": {"values": ["{item}", "sse"]}, "loop": ["vmx", "sse"], "multiple": "first"}`, true},
		{`{"op": "eq", "args": {"values": ["{item}", "vmx"]}, "loop": ["vmx", "sse"], "multiple": "last"}`, false},
		{`{"op": "eq", "args": {"values": ["{item}", 8]}, "loop": [8]}`, true}, // force_strings in loops
		{`{"op": "eq", "args": {"values": ["{inventory[secrets][bmc_password]}", "***"]}}`, true},
		{`{"op": "eq", "args": {"values": ["{node.driver_info[ipmi_password]}", "******"]}}`, true}, // the node's secrets too
	}
	for _, c := range cases {
		env := newEnv()
		r := rule(t, `{"conditions": [`+c.cond+`], "actions": [{"op": "add-trait", "args": {"name": "CUSTOM_HIT"}}]}`)
		if err := Apply(env, []Rule{r}, inv, map[string]any{}, MaskAlways, "n-1"); err != nil {
			t.Fatalf("%s: %v", c.cond, err)
		}
		if got := len(env.traits) == 1; got != c.want {
			t.Errorf("%s: matched %v, want %v (logs %v)", c.cond, got, c.want, env.logs)
		}
	}
	// Ordering across types is Python's TypeError: the rule fails.
	r := rule(t, `{"conditions": [{"op": "gt", "args": {"values": ["{inventory[cpu][count]}", 4]}}], "actions": [{"op": "fail", "args": {"msg": "x"}}]}`)
	err := Apply(newEnv(), []Rule{r}, inv, map[string]any{}, MaskAlways, "n-1")
	if err == nil || !strings.Contains(err.Error(), "Failed to apply rule r to node n-1: TypeError: '>' not supported between instances of 'str' and 'int'") {
		t.Errorf("gt str/int: %v", err)
	}
	// mask_secrets never: the rule sees the password.
	r = rule(t, `{"conditions": [{"op": "eq", "args": {"values": ["{inventory[secrets][bmc_password]}", "hunter2"]}}], "actions": [{"op": "add-trait", "args": {"name": "CUSTOM_X"}}]}`)
	env := newEnv()
	if err := Apply(env, []Rule{r}, inv, map[string]any{}, MaskNever, "n-1"); err != nil || len(env.traits) != 1 {
		t.Errorf("mask never: %v %v", err, env.traits)
	}
	// mask_secrets sensitive: a sensitive rule sees the secrets, another not.
	r = rule(t, `{"conditions": [{"op": "eq", "args": {"values": ["{node.driver_info[ipmi_password]}", "s3cret"]}}], "actions": [{"op": "add-trait", "args": {"name": "CUSTOM_X"}}]}`)
	for _, sensitive := range []bool{false, true} {
		r.Sensitive = sensitive
		env := newEnv()
		if err := Apply(env, []Rule{r}, inv, map[string]any{}, MaskSensitive, "n-1"); err != nil || (len(env.traits) == 1) != sensitive {
			t.Errorf("mask sensitive, rule sensitive %v: %v %v", sensitive, err, env.traits)
		}
	}
}

// TestActions: every action on the node, its ports, traits and the
// plugin data; priorities order the rules; fail stops inspection.
func TestActions(t *testing.T) {
	inv := decode(t, inventory)
	pd := map[string]any{"keep": map[string]any{"a": 1.0, "b": 2.0}, "gone": map[string]any{"only": true}}
	env := newEnv()
	env.traits = []string{"CUSTOM_OLD"}
	low := rule(t, `{"priority": 10, "actions": [
		{"op": "set-attribute", "args": {"path": "/driver", "value": "redfish-{inventory[cpu][architecture]}"}}]}`)
	high := rule(t, `{"priority": 50, "actions": [
		{"op": "set-attribute", "args": {"path": "driver_info.redfish_address", "value": "https://{inventory[bmc_address]}"}},
		{"op": "set-attribute", "args": {"path": "/driver", "value": "idrac"}},
		{"op": "set-attribute", "args": {"path": "/extra/{item[k]}", "value": "{item[v]}"}, "loop": [{"k": "a", "v": "{inventory[cpu][count]}"}, {"k": "b", "v": "x"}]},
		{"op": "extend-attribute", "args": {"path": "/extra/tags", "value": "t1"}},
		{"op": "extend-attribute", "args": {"path": "/extra/tags", "value": "t1", "unique": true}},
		{"op": "del-attribute", "args": {"path": "/driver_info/ipmi_password"}},
		{"op": "set-capability", "args": {"name": "cpu_vendor", "value": "{inventory[system_vendor][manufacturer]}"}},
		{"op": "unset-capability", "args": {"name": "boot_mode"}},
		{"op": "add-trait", "args": {"name": "{item}"}, "loop": ["CUSTOM_{inventory[cpu][architecture]}"]},
		{"op": "add-trait", "args": {"name": "CUSTOM_{inventory[cpu][architecture]}"}},
		{"op": "remove-trait", "args": {"name": "CUSTOM_{inventory[cpu][architecture]}"}},
		{"op": "remove-trait", "args": {"name": "CUSTOM_OLD"}},
		{"op": "remove-trait", "args": {"name": "CUSTOM_NEVER"}},
		{"op": "set-plugin-data", "args": {"path": "extra.vendor", "value": "{inventory[system_vendor][product_name]}"}},
		{"op": "extend-plugin-data", "args": {"path": "seen", "value": "{inventory[bmc_address]}"}},
		{"op": "unset-plugin-data", "args": {"path": "keep.a"}},
		{"op": "unset-plugin-data", "args": {"path": "gone.only"}},
		{"op": "set-port-attribute", "args": {"port_id": "p-1", "path": "physical_network", "value": "physnet1"}},
		{"op": "extend-port-attribute", "args": {"port_id": "p-1", "path": "/extra/list", "value": 1}},
		{"op": "log", "args": {"msg": "node {node.uuid} done", "level": "warning"}}]}`)
	if err := Apply(env, []Rule{low, high}, inv, pd, MaskAlways, "n-1"); err != nil {
		t.Fatal(err)
	}
	n := env.node.fields
	if n["driver"] != "redfish-x86_64" {
		t.Errorf("driver %v: the priority-10 rule must run last", n["driver"])
	}
	if di := n["driver_info"].(map[string]any); di["redfish_address"] != "https://192.0.2.10" || di["ipmi_password"] != nil {
		t.Errorf("driver_info %v", di)
	}
	extra := n["extra"].(map[string]any)
	if extra["a"] != "8" || extra["b"] != "x" || len(extra["tags"].([]any)) != 1 {
		t.Errorf("extra %v", extra)
	}
	if caps := n["properties"].(map[string]any)["capabilities"]; caps != "cpu_vendor:Dell Inc." {
		t.Errorf("capabilities %q", caps)
	}
	if !slices.Equal(env.traits, []string{"CUSTOM_x86_64"}) {
		t.Errorf("traits %v", env.traits)
	}
	if pd["extra"].(map[string]any)["vendor"] != "R640" || len(pd["seen"].([]any)) != 1 || pd["gone"] != nil {
		t.Errorf("plugin data %v", pd)
	}
	if k := pd["keep"].(map[string]any); len(k) != 1 || k["b"] != 2.0 {
		t.Errorf("plugin data keep %v", k)
	}
	p := env.ports["p-1"].fields
	if p["physical_network"] != "physnet1" || len(p["extra"].(map[string]any)["list"].([]any)) != 1 {
		t.Errorf("port %v", p)
	}
	if !slices.Contains(env.logs, "warning: node n-1 done") {
		t.Errorf("logs %v", env.logs)
	}

	for doc, want := range map[string]string{
		`{"actions": [{"op": "fail", "args": {"msg": "no {inventory[cpu][count]} CPUs wanted"}}]}`:                                         "Failed to inspect hardware. Reason: no {inventory[cpu][count]} CPUs wanted",
		`{"actions": [{"op": "set-port-attribute", "args": {"port_id": "nope", "path": "extra/a", "value": 1}}]}`:                          "Port nope could not be found.",
		`{"actions": [{"op": "extend-attribute", "args": {"path": "/driver", "value": 1}}]}`:                                               "Cannot extend non-list attribute /driver with value 1",
		`{"actions": [{"op": "set-attribute", "args": {"path": "/nonexistent", "value": 1}}]}`:                                             "Failed to set attribute /nonexistent with value 1",
		`{"conditions": [{"op": "in-net", "args": {"address": "x", "subnet": "bad"}}], "actions": [{"op": "fail", "args": {"msg": "m"}}]}`: "invalid value",
	} {
		err := Apply(newEnv(), []Rule{rule(t, doc)}, inv, map[string]any{}, MaskAlways, "n-1")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", doc, err, want)
		}
	}
}

// TestValidate: Ironic's validate_rule messages.
func TestValidate(t *testing.T) {
	for doc, want := range map[string]string{
		`{"actions": []}`: "Validation failed for inspection rule: [] should be non-empty",
		`{"actions": [{"op": "add-trait", "args": {}}]}`:                                                             "Inspection rule validation failed. Reason: missing required argument(s): name",
		`{"actions": [{"op": "add-trait", "args": {"name": "X", "b": 1}}]}`:                                          "Inspection rule validation failed. Reason: unexpected argument(s): b",
		`{"actions": [{"op": "add-trait", "args": ["X"]}], "phase": "early"}`:                                        "Invalid phase: early. Valid phases are: main",
		`{"actions": [{"op": "add-trait", "args": ["X"]}], "priority": 10000, "phase": "x"}`:                         "Multiple validation errors occurred: Invalid phase: x. Valid phases are: main; Priority must be between 0 and 9999 for user-defined rules.",
		`{"actions": [{"op": "api-call", "args": {"url": "http://x"}}]}`:                                             "is not one of the action operators",
		`{"conditions": [{"op": "!!eq", "args": {"values": []}}], "actions": [{"op": "log", "args": {"msg": "m"}}]}`: "is not one of the condition operators",
		`{"conditions": [{"op": "eq", "args": []}], "actions": [{"op": "log", "args": {"msg": "m"}}]}`:               "Not enough arguments provided. Missing: values",
	} {
		err := Validate(decode(t, doc), false)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", doc, err, want)
		}
	}
	if err := Validate(decode(t, `{"priority": -5, "actions": [{"op": "log", "args": ["m", "debug"]}]}`), true); err != nil {
		t.Errorf("built-in rules may have a negative priority: %v", err)
	}
}

// TestBuiltIn: a YAML file of rules, synthetic UUIDs, refusal of a bad
// rule.
func TestBuiltIn(t *testing.T) {
	rules, err := ParseBuiltIn([]byte(`
- description: first
  priority: -10
  actions:
    - op: add-trait
      args: {name: CUSTOM_A}
- uuid: 7c0a5bd5-2ab4-4b2c-9ad4-7cd1bdb1d5c6
  conditions:
    - op: is-true
      args: {value: "{node.maintenance}"}
  actions:
    - op: log
      args: {msg: hi}
- actions:
    - op: fail
      args: {msg: no}
`), "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 3 || rules[0].UUID != "00000000-0000-0000-0000-000000000000" || rules[0].Priority != -10 ||
		rules[1].UUID != "7c0a5bd5-2ab4-4b2c-9ad4-7cd1bdb1d5c6" || rules[2].UUID != "00000000-0000-0000-0000-000000000001" {
		t.Errorf("rules %+v", rules)
	}
	if _, err := ParseBuiltIn([]byte("- actions: [{op: nope, args: {}}]"), "bad.yaml"); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("bad rule: %v", err)
	}
	if _, err := ParseBuiltIn([]byte("a: b"), "map.yaml"); err == nil || !strings.Contains(err.Error(), "should contain a list of rules") {
		t.Errorf("not a list: %v", err)
	}
}

func TestFormatString(t *testing.T) {
	ctx := map[string]any{"inventory": map[string]any{"a": map[string]any{"b": []any{"x", 2.0, true, nil}}}, "item": "i",
		"ctl": []any{"bell\a", "it's", "nul\x00\x7f"}}
	for in, want := range map[string]string{
		// Python's repr escapes control characters and picks the quote.
		"{ctl}": `['bell\x07', "it's", 'nul\x00\x7f']`,
		"{inventory[a][b][0]}-{inventory[a][b][1]}": "x-2",
		"{inventory[a][b]}":                         "['x', 2, True, None]",
		"{{literal}} {item!r}":                      "{literal} 'i'",
		"{inventory.a[b][2]}":                       "True",
	} {
		got, err := formatString(in, ctx)
		if err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"{inventory[zz]}", "{nothing}", "{inventory[a][b][9]}", "{item:>5}", "{"} {
		if _, err := formatString(bad, ctx); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
