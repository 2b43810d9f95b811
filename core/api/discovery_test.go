package api_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// TestAutoDiscovery: with [auto_discovery] enabled (API and conductor),
// inspection data whose MACs match no node enrolls one (Ironic's
// _auto_enroll): enroll, the configured driver, inspect_interface agent;
// the hooks set its properties and ports, an inspection rule keyed on
// plugin_data.auto_discovered names it, the data is stored with the flag,
// and it stays in enroll. Data matching it again while it is in enroll is
// found by its port but refused (404), as Ironic's lookup takes only
// nodes in "inspect wait"; no second node is enrolled. Without discovery
// the first POST is 404 too (TestAgentInspectionThroughRealConductor).
func TestAutoDiscovery(t *testing.T) {
	h := newStackTuned(t, release.NewPinner(release.Default(), release.Pin{}),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)},
		func(c *conductor.Config) { c.AutoDiscovery.Enabled, c.AutoDiscovery.Driver = true, fake.HardwareType },
		api.WithTestMaxAPI("1.96"),
		func(d *api.Deps) { d.AutoDiscovery = api.AutoDiscovery{Enabled: true, Driver: fake.HardwareType} })
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := inspClient{t: t, url: srv.URL}

	c.call("POST", "/v1/inspection_rules", "1.96", map[string]any{
		"conditions": []any{map[string]any{"op": "is-true", "args": map[string]any{"value": "{plugin_data[auto_discovered]}"}}},
		"actions": []any{map[string]any{"op": "set-attribute", "args": map[string]any{"path": "/name",
			"value": "discovered-{inventory[cpu][architecture]}"}}}}, 201)
	answer := c.call("POST", "/v1/continue_inspection", "1.84", ipaInspection(t, false), 202)
	id, _ := answer["node"].(map[string]any)["uuid"].(string)
	if id == "" {
		t.Fatalf("answer %v, want the new node", answer)
	}
	var n map[string]any
	deadline := time.Now().Add(10 * time.Second)
	for {
		n = c.call("GET", "/v1/nodes/"+id, "1.96", nil, 200)
		if n["inspection_finished_at"] != nil || n["last_error"] != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the discovered node was never processed: %v", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n["provision_state"] != "enroll" || n["driver"] != fake.HardwareType || n["inspect_interface"] != "agent" || n["last_error"] != nil {
		t.Errorf("discovered node: state %v driver %v inspect %v last_error %v", n["provision_state"], n["driver"], n["inspect_interface"], n["last_error"])
	}
	if name, _ := n["name"].(string); name != "discovered-x86_64" {
		t.Errorf("name %v, want the rule's", n["name"])
	}
	if p := n["properties"].(map[string]any); p["cpus"] != float64(2) || p["memory_mb"] != float64(24576) {
		t.Errorf("properties %v", p)
	}
	ports := c.call("GET", "/v1/nodes/"+id+"/ports", "1.96", nil, 200)["ports"].([]any)
	if len(ports) != 1 || ports[0].(map[string]any)["address"] != "02:00:00:72:69:01" {
		t.Errorf("ports %v", ports)
	}
	pd := c.call("GET", "/v1/nodes/"+id+"/inventory", "1.96", nil, 200)["plugin_data"].(map[string]any)
	if pd["auto_discovered"] != true {
		t.Errorf("plugin_data.auto_discovered %v", pd["auto_discovered"])
	}
	// The node is found by its port now, in enroll: 404 as Ironic's
	// lookup_node (only "inspect wait" is accepted), and no second node.
	c.call("POST", "/v1/continue_inspection", "1.84", ipaInspection(t, false), 404)
	if nodes := c.call("GET", "/v1/nodes", "1.96", nil, 200)["nodes"].([]any); len(nodes) != 1 {
		t.Errorf("nodes %v, want the one discovered", nodes)
	}
}
