package api_test

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestInspectionRulesRunAfterInspection: rules created through the API
// run on the conductor after in-band inspection, highest priority first,
// with Ironic's interpolation: a matching rule sets driver_info from the
// inventory, a capability, a trait and plugin data (stored with the
// inventory), and a port attribute; a rule whose condition fails does
// nothing; a "fail" rule fails inspection with its message. A second
// inspection replaces the stored data and the node's history says so.
func TestInspectionRulesRunAfterInspection(t *testing.T) {
	c := newInspectionStackAt(t, "1.96")
	n := c.call("POST", "/v1/nodes", "1.96", `{"name":"r1","driver":"fake-hardware","inspect_interface":"agent",
		"driver_info":{"deploy_iso":"http://images.test/ipa.iso"}}`, 201)
	id := n["uuid"].(string)
	port := c.call("POST", "/v1/ports", "1.96", `{"node_uuid":"`+id+`","address":"02:00:00:72:69:01"}`, 201)
	c.call("PUT", "/v1/nodes/r1/states/provision", "1.96", `{"target":"manage"}`, 202)
	c.waitState(id, "manageable")

	c.call("POST", "/v1/inspection_rules", "1.96", map[string]any{"priority": 50, "description": "x86 nodes",
		"conditions": []any{
			map[string]any{"op": "eq", "args": map[string]any{"values": []any{"{inventory[cpu][architecture]}", "x86_64"}}},
			map[string]any{"op": "gt", "args": map[string]any{"values": []any{"{inventory[memory][physical_mb]}", "0"}}},
		},
		"actions": []any{
			map[string]any{"op": "set-attribute", "args": map[string]any{"path": "/driver_info/inspected_cpus", "value": "{inventory[cpu][count]}"}},
			map[string]any{"op": "set-capability", "args": map[string]any{"name": "cpu_arch", "value": "{inventory[cpu][architecture]}"}},
			map[string]any{"op": "add-trait", "args": map[string]any{"name": "{item}"}, "loop": []any{"CUSTOM_CPUS_{inventory[cpu][count]}"}},
			map[string]any{"op": "set-plugin-data", "args": map[string]any{"path": "rules.seen", "value": "{node.name}"}},
			map[string]any{"op": "set-port-attribute", "args": map[string]any{"port_id": port["uuid"], "path": "/extra/rack", "value": "r{inventory[cpu][count]}"}},
		}}, 201)
	c.call("POST", "/v1/inspection_rules", "1.96", map[string]any{"priority": 10,
		"conditions": []any{map[string]any{"op": "is-true", "args": map[string]any{"value": "{node.maintenance}"}}},
		"actions":    []any{map[string]any{"op": "fail", "args": map[string]any{"msg": "in maintenance"}}}}, 201)
	// Runs after the priority-50 rule: it sees the driver_info it set.
	c.call("POST", "/v1/inspection_rules", "1.96", map[string]any{"priority": 1,
		"conditions": []any{map[string]any{"op": "is-empty", "args": map[string]any{"value": "{node.driver_info[inspected_cpus]}"}}},
		"actions":    []any{map[string]any{"op": "fail", "args": map[string]any{"msg": "priority order broken"}}}}, 201)

	inspect := func() map[string]any {
		c.call("PUT", "/v1/nodes/r1/states/provision", "1.96", `{"target":"inspect"}`, 202)
		c.waitState(id, "inspect wait")
		c.call("POST", "/v1/continue_inspection", "1.96", ipaInspection(t, false), 202)
		for {
			got := c.call("GET", "/v1/nodes/"+id, "1.96", nil, 200)
			if got["provision_state"] == "manageable" || got["provision_state"] == "inspect failed" {
				return got
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	done := inspect()
	if done["provision_state"] != "manageable" {
		t.Fatalf("inspection with rules: %v (%v)", done["provision_state"], done["last_error"])
	}
	if di := done["driver_info"].(map[string]any); di["inspected_cpus"] != "2" {
		t.Errorf("driver_info %v, want inspected_cpus \"2\" (interpolation gives a string, as Python's format)", di)
	}
	if caps := done["properties"].(map[string]any)["capabilities"]; !strings.Contains(caps.(string), "cpu_arch:x86_64") {
		t.Errorf("capabilities %v", caps)
	}
	traits := c.call("GET", "/v1/nodes/"+id+"/traits", "1.96", nil, 200)["traits"].([]any)
	if len(traits) != 1 || traits[0] != "CUSTOM_CPUS_2" {
		t.Errorf("traits %v", traits)
	}
	pd := c.call("GET", "/v1/nodes/"+id+"/inventory", "1.96", nil, 200)["plugin_data"].(map[string]any)
	if rules, _ := pd["rules"].(map[string]any); rules["seen"] != "r1" {
		t.Errorf("plugin_data.rules %v", pd["rules"])
	}
	if p := c.call("GET", "/v1/ports/"+port["uuid"].(string), "1.96", nil, 200); p["extra"].(map[string]any)["rack"] != "r2" {
		t.Errorf("port extra %v", p["extra"])
	}

	// The second inspection replaces the data; the history says so.
	again := inspect()
	if again["provision_state"] != "manageable" {
		t.Fatalf("second inspection: %v (%v)", again["provision_state"], again["last_error"])
	}
	hist := c.call("GET", "/v1/nodes/"+id+"/history?detail=True", "1.96", nil, 200)["history"].([]any)
	found := false
	for _, h := range hist {
		e := h.(map[string]any)
		found = found || (e["event_type"] == "introspection" && strings.Contains(e["event"].(string), "Inspection data of node "+id+" replaced"))
	}
	if !found {
		t.Errorf("no history entry says the inspection data was replaced: %v", hist)
	}

	// A matching "fail" rule fails inspection with its message.
	c.call("PATCH", "/v1/nodes/"+id, "1.96", `[{"op":"replace","path":"/maintenance","value":true}]`, 200)
	failed := inspect()
	if failed["provision_state"] != "inspect failed" ||
		failed["last_error"] != "Failed to finish inspection: Failed to inspect hardware. Reason: in maintenance" {
		t.Errorf("fail rule: %v, last_error %v", failed["provision_state"], failed["last_error"])
	}
}

// TestInspectionRulesAfterOutOfBandInspection: as in Ironic, the rules
// also run after out-of-band inspection, on the BMC's inventory in the
// agent's shape (cpu, memory, interfaces); a failing rule fails it.
func TestInspectionRulesAfterOutOfBandInspection(t *testing.T) {
	c := newInspectionStackAt(t, "1.96")
	n := c.call("POST", "/v1/nodes", "1.96", `{"name":"oob","driver":"fake-hardware"}`, 201)
	id := n["uuid"].(string)
	c.call("PUT", "/v1/nodes/oob/states/provision", "1.96", `{"target":"manage"}`, 202)
	c.waitState(id, "manageable")
	rule := c.call("POST", "/v1/inspection_rules", "1.96", map[string]any{
		"conditions": []any{map[string]any{"op": "!is-empty", "args": map[string]any{"value": "{inventory[interfaces][0][mac_address]}"}}},
		"actions": []any{
			map[string]any{"op": "set-attribute", "args": map[string]any{"path": "/extra/arch", "value": "{inventory[cpu][architecture]}/{inventory[memory][physical_mb]}"}},
			map[string]any{"op": "add-trait", "args": map[string]any{"name": "CUSTOM_OOB"}},
		}}, 201)
	c.call("PUT", "/v1/nodes/oob/states/provision", "1.96", `{"target":"inspect"}`, 202)
	done := c.waitState(id, "manageable")
	props := done["properties"].(map[string]any)
	want := props["cpu_arch"].(string) + "/" + fmtNum(props["memory_mb"])
	if got := done["extra"].(map[string]any)["arch"]; got != want {
		t.Errorf("extra.arch %v, want %q", got, want)
	}
	if tr := c.call("GET", "/v1/nodes/"+id+"/traits", "1.96", nil, 200)["traits"].([]any); len(tr) != 1 || tr[0] != "CUSTOM_OOB" {
		t.Errorf("traits %v", tr)
	}

	c.call("DELETE", "/v1/inspection_rules/"+rule["uuid"].(string), "1.96", nil, 204)
	c.call("POST", "/v1/inspection_rules", "1.96", map[string]any{
		"actions": []any{map[string]any{"op": "fail", "args": map[string]any{"msg": "no out-of-band inspection here"}}}}, 201)
	c.call("PUT", "/v1/nodes/oob/states/provision", "1.96", `{"target":"inspect"}`, 202)
	for {
		got := c.call("GET", "/v1/nodes/"+id, "1.96", nil, 200)
		if got["provision_state"] == "inspect failed" {
			if got["last_error"] != "Failed to finish inspection: Failed to inspect hardware. Reason: no out-of-band inspection here" {
				t.Errorf("last_error %v", got["last_error"])
			}
			break
		}
		if got["provision_state"] == "manageable" && got["target_provision_state"] == nil && got["inspection_finished_at"] != done["inspection_finished_at"] {
			t.Fatalf("a failing rule did not fail out-of-band inspection")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func fmtNum(v any) string {
	f, _ := v.(float64)
	return strconv.FormatInt(int64(f), 10)
}

// TestNoInspectIsUnsupported: a node whose inspect interface does nothing
// (no-inspect, the ipmi hardware type's default: IPMI has no inventory
// Rivet reads out of band) is refused with Ironic's 400
// UnsupportedDriverExtension, and stays manageable.
func TestNoInspectIsUnsupported(t *testing.T) {
	c := newInspectionStackAt(t, "1.96")
	n := c.call("POST", "/v1/nodes", "1.96", `{"name":"noi","driver":"fake-hardware","inspect_interface":"no-inspect"}`, 201)
	id := n["uuid"].(string)
	c.call("PUT", "/v1/nodes/noi/states/provision", "1.96", `{"target":"manage"}`, 202)
	c.waitState(id, "manageable")
	got := c.call("PUT", "/v1/nodes/noi/states/provision", "1.96", `{"target":"inspect"}`, 400)
	if msg, _ := got["error_message"].(string); !strings.Contains(msg, "Driver fake-hardware does not support inspect (disabled or not implemented).") {
		t.Errorf("error %v", got)
	}
	if st := c.call("GET", "/v1/nodes/"+id, "1.96", nil, 200)["provision_state"]; st != "manageable" {
		t.Errorf("provision_state %v", st)
	}
}
