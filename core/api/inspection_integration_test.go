package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// ipaInspection is what IPA 9.14.1 posted to /v1/continue_inspection when
// run in a network namespace with the shared recipe's inspect overlay
// (testdata/ipa-9.14.1-inspection.json: captured, the base64 logs
// trimmed). Its "error" is real: the dmi-decode collector found no
// /dev/mem; without it the data is the agent's usual.
func ipaInspection(t *testing.T, withError bool) map[string]any {
	t.Helper()
	data, err := os.ReadFile("testdata/ipa-9.14.1-inspection.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if !withError {
		m["error"] = nil
	}
	return m
}

type inspClient struct {
	t   *testing.T
	url string
}

func (c inspClient) call(method, path, ver string, body any, want int) map[string]any {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, _ := json.Marshal(b)
		rd = strings.NewReader(string(data))
	}
	req, _ := http.NewRequest(method, c.url+path, rd)
	if ver != "" {
		req.Header.Set(api.HeaderVersion, ver)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s @%s: %d, want %d: %v", method, path, ver, resp.StatusCode, want, out)
	}
	return out
}

func (c inspClient) waitState(id, state string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := c.call("GET", "/v1/nodes/"+id, "1.84", nil, 200)
		if n["provision_state"] == state && (n["target_provision_state"] == nil || state == "inspect wait") {
			return n
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("node never reached %s: %v (last_error %v)", state, n["provision_state"], n["last_error"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newInspectionStack(t *testing.T) inspClient {
	t.Helper()
	return newInspectionStackAt(t, "1.84")
}

func newInspectionStackAt(t *testing.T, maxAPI string) inspClient {
	t.Helper()
	h := newStackWith(t, release.NewPinner(release.Default(), release.Pin{}),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)}, api.WithTestMaxAPI(maxAPI))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return inspClient{t: t, url: srv.URL}
}

// TestAgentInspectionThroughRealConductor: a manageable node with the
// agent inspect interface is inspected in band: inspect moves it to
// "inspect wait" (the agent booted), IPA's real inspection POST finds it by
// the MAC of a port, answers 202 with the agent's token (1.84), and the
// conductor sets the properties, creates the port of the namespace NIC,
// stores the inventory (GET .../inventory shows the loop disk and the
// NIC's MAC, never the logs) and returns the node to manageable, powered
// off. A heartbeat with a wrong token is refused; a second inspection
// replaces the stored data.
func TestAgentInspectionThroughRealConductor(t *testing.T) {
	c := newInspectionStack(t)
	n := c.call("POST", "/v1/nodes", "1.84", `{"name":"n1","driver":"fake-hardware","inspect_interface":"agent",
		"properties":{"capabilities":"foo:bar"},"driver_info":{"deploy_iso":"http://images.test/ipa.iso"}}`, 201)
	id := n["uuid"].(string)
	c.call("PUT", "/v1/nodes/n1/states/provision", "1.84", `{"target":"manage"}`, 202)
	c.waitState(id, "manageable")

	// Nothing to post to yet: the node is not in inspect wait.
	c.call("POST", "/v1/continue_inspection", "1.84", ipaInspection(t, false), 404)

	c.call("PUT", "/v1/nodes/n1/states/provision", "1.84", `{"target":"inspect"}`, 202)
	waiting := c.waitState(id, "inspect wait")
	if waiting["power_state"] != "power on" {
		t.Errorf("power_state in inspect wait = %v, want power on (the agent booted)", waiting["power_state"])
	}
	// 1.38 still calls it inspecting.
	if got := c.call("GET", "/v1/nodes/"+id, "1.38", nil, 200)["provision_state"]; got != "inspecting" {
		t.Errorf("provision_state @1.38 = %v, want inspecting", got)
	}
	// Unknown MACs and no BMC: nothing found, and nothing changes.
	stranger := ipaInspection(t, false)
	stranger["inventory"].(map[string]any)["interfaces"] = []any{map[string]any{"name": "x", "mac_address": "52:54:00:99:99:99"}}
	c.call("POST", "/v1/continue_inspection", "1.84", stranger, 404)

	// The agent finds its node by the port of its NIC.
	c.call("POST", "/v1/ports", "1.84", `{"node_uuid":"`+id+`","address":"02:00:00:72:69:01"}`, 201)
	answer := c.call("POST", "/v1/continue_inspection", "1.84", ipaInspection(t, false), 202)
	cfg, _ := answer["config"].(map[string]any)
	token, _ := cfg["agent_token"].(string)
	if node, _ := answer["node"].(map[string]any); node["uuid"] != id || len(token) < 40 {
		t.Fatalf("continue_inspection answer = %v, want the node and a fresh agent token", answer)
	}
	done := c.waitState(id, "manageable")
	props := done["properties"].(map[string]any)
	want := map[string]any{"cpus": float64(2), "memory_mb": float64(24576), "cpu_arch": "x86_64", "local_gb": float64(0),
		"capabilities": "foo:bar,boot_mode:bios"}
	for k, v := range want {
		if props[k] != v {
			t.Errorf("properties[%s] = %v, want %v", k, props[k], v)
		}
	}
	if done["power_state"] != "power off" || done["inspection_finished_at"] == nil || done["last_error"] != nil {
		t.Errorf("after inspection: power %v, finished %v, last_error %v", done["power_state"], done["inspection_finished_at"], done["last_error"])
	}
	if dii := done["driver_internal_info"].(map[string]any); dii["agent_secret_token"] != nil || dii["lookup_bmc_addresses"] != nil {
		t.Errorf("driver_internal_info keeps inspection leftovers: %v", dii)
	}
	ports := c.call("GET", "/v1/nodes/"+id+"/ports/detail", "1.84", nil, 200)["ports"].([]any)
	if len(ports) != 1 || ports[0].(map[string]any)["address"] != "02:00:00:72:69:01" {
		t.Errorf("ports = %v, want the namespace NIC's", ports)
	}
	// The token the answer gave is the agent's no longer: inspection ended.
	c.call("POST", "/v1/heartbeat/"+id, "1.84", map[string]any{"callback_url": "http://10.255.0.2:7810", "agent_token": token}, 400)
	c.call("POST", "/v1/heartbeat/"+id, "1.84", map[string]any{"callback_url": "http://10.255.0.2:7810", "agent_token": "wrong"}, 400)

	inv := c.call("GET", "/v1/nodes/"+id+"/inventory", "1.84", nil, 200)
	disks := inv["inventory"].(map[string]any)["disks"].([]any)
	if disks[0].(map[string]any)["name"] != "/dev/loop0" {
		t.Errorf("stored disks = %v, want /dev/loop0", disks)
	}
	nics := inv["inventory"].(map[string]any)["interfaces"].([]any)
	if nics[0].(map[string]any)["mac_address"] != "02:00:00:72:69:01" {
		t.Errorf("stored interfaces = %v", nics)
	}
	pd := inv["plugin_data"].(map[string]any)
	if _, ok := pd["logs"]; ok {
		t.Error("plugin_data stored the agent's logs")
	}
	if pd["local_gb"] != float64(0) || pd["macs"] == nil {
		t.Errorf("plugin_data lacks the hooks' results: %v", pd)
	}
	c.call("GET", "/v1/nodes/"+id+"/inventory", "1.80", nil, 404)

	// A second inspection replaces the data.
	c.call("PUT", "/v1/nodes/n1/states/provision", "1.84", `{"target":"inspect"}`, 202)
	c.waitState(id, "inspect wait")
	second := ipaInspection(t, false)
	second["inventory"].(map[string]any)["cpu"].(map[string]any)["count"] = 8
	second["inventory"].(map[string]any)["boot"] = map[string]any{"current_boot_mode": "uefi", "pxe_interface": "01-02-00-00-72-69-01"}
	c.call("POST", "/v1/continue_inspection", "1.84", second, 202)
	again := c.waitState(id, "manageable")
	if p := again["properties"].(map[string]any); p["cpus"] != float64(8) || p["capabilities"] != "foo:bar,boot_mode:uefi" {
		t.Errorf("second inspection: properties %v", p)
	}
	ports = c.call("GET", "/v1/nodes/"+id+"/ports/detail", "1.84", nil, 200)["ports"].([]any)
	if len(ports) != 1 || ports[0].(map[string]any)["pxe_enabled"] != true {
		t.Errorf("ports after booting from the NIC = %v, want it pxe_enabled", ports)
	}
	count := c.call("GET", "/v1/nodes/"+id+"/inventory", "1.84", nil, 200)["inventory"].(map[string]any)["cpu"].(map[string]any)["count"]
	if count != float64(8) {
		t.Errorf("stored cpu count after the second inspection = %v, want 8", count)
	}
}

// TestAgentInspectionFailures: the agent's own error fails inspection
// with Ironic's message (the captured payload has one); abort in inspect
// wait is 406 below 1.41, and at 1.41 fails the node with Ironic's
// last_error; inspect_interface agent on a node that is not in inspect
// wait never reaches the conductor.
func TestAgentInspectionFailures(t *testing.T) {
	c := newInspectionStack(t)
	n := c.call("POST", "/v1/nodes", "1.84", `{"name":"n2","driver":"fake-hardware","inspect_interface":"agent","driver_info":{"deploy_iso":"http://images.test/ipa.iso"}}`, 201)
	id := n["uuid"].(string)
	c.call("POST", "/v1/ports", "1.84", `{"node_uuid":"`+id+`","address":"02:00:00:72:69:01"}`, 201)
	c.call("PUT", "/v1/nodes/n2/states/provision", "1.84", `{"target":"manage"}`, 202)
	c.waitState(id, "manageable")

	c.call("PUT", "/v1/nodes/n2/states/provision", "1.84", `{"target":"inspect"}`, 202)
	c.waitState(id, "inspect wait")
	// IPA sends no version header: 1.1 answers as ironic-inspector.
	req, _ := http.NewRequest("POST", c.url+"/v1/continue_inspection", strings.NewReader(mustJSON(t, ipaInspection(t, true))))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var old map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&old)
	resp.Body.Close()
	if resp.StatusCode != 202 || old["uuid"] != id || len(old) != 1 {
		t.Fatalf("continue_inspection @1.1: %d %v, want 202 {uuid}", resp.StatusCode, old)
	}
	failed := c.waitState(id, "inspect failed")
	// Ironic's wording, layer by layer (conductor, agent interface, hooks).
	want := "Failed to finish inspection: Failed to inspect hardware. Reason: failed to run inspection hooks: " +
		"Failed to inspect hardware. Reason: The following failures happened while running preprocess hooks for node " + id + ":\n" +
		"Error in preprocess hook ramdisk-error: Failed to inspect hardware. Reason: Ramdisk reported error: The following errors were encountered:\n* failed to run dmidecode"
	if le, _ := failed["last_error"].(string); !strings.HasPrefix(le, want) {
		t.Errorf("last_error = %q, want it to start with %q", le, want)
	}
	c.call("GET", "/v1/nodes/"+id+"/inventory", "1.84", nil, 404)

	// Abort: 406 below 1.41.
	c.call("PUT", "/v1/nodes/n2/states/provision", "1.84", `{"target":"inspect"}`, 202)
	c.waitState(id, "inspect wait")
	c.call("PUT", "/v1/nodes/n2/states/provision", "1.40", `{"target":"abort"}`, 406)
	c.call("PUT", "/v1/nodes/n2/states/provision", "1.41", `{"target":"abort"}`, 202)
	aborted := c.waitState(id, "inspect failed")
	if aborted["last_error"] != "Inspection was aborted by request." || aborted["power_state"] != "power off" {
		t.Errorf("after abort: last_error %v, power %v", aborted["last_error"], aborted["power_state"])
	}
	// GET /v1/ links it from 1.84 only (Ironic hides the 1.1 compatibility).
	if _, ok := c.call("GET", "/v1/", "1.84", nil, 200)["continue_inspection"]; !ok {
		t.Error("GET /v1/ @1.84 does not link continue_inspection")
	}
	if _, ok := c.call("GET", "/v1/", "1.83", nil, 200)["continue_inspection"]; ok {
		t.Error("GET /v1/ @1.83 links continue_inspection")
	}
	// Other versions of the endpoint: 404 with Ironic's words.
	c.call("POST", "/v1/continue_inspection", "1.83", ipaInspection(t, false), 404)
	c.call("POST", "/v1/continue_inspection?node_uuid="+id, "1.1", ipaInspection(t, false), 404)
	c.call("POST", "/v1/continue_inspection", "1.84", `{"inventory":{"interfaces":[]}}`, 400)
	c.call("POST", "/v1/continue_inspection", "1.84", `{"inventory":{"interfaces":[{"mac_address":"zz"}]}}`, 400)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAgentInspectionPinnedTo02: while the services are pinned to release
// 0.2 (RPC 1.4) continue_inspection (RPC 1.5) is capped: the agent's POST
// at 1.1 is answered 406 before anything reaches the conductor, and the
// node keeps waiting; 1.81 and 1.84 are beyond 0.2's API (406).
func TestAgentInspectionPinnedTo02(t *testing.T) {
	pin, err := release.Default().ParsePin("0.2")
	if err != nil {
		t.Fatal(err)
	}
	h := newStackWith(t, release.NewPinner(release.Default(), pin),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := inspClient{t: t, url: srv.URL}
	n := c.call("POST", "/v1/nodes", "1.31", `{"name":"n3","driver":"fake-hardware","inspect_interface":"agent","driver_info":{"deploy_kernel":"http://images.test/ipa.kernel","deploy_ramdisk":"http://images.test/ipa.initramfs"}}`, 201)
	id := n["uuid"].(string)
	c.call("POST", "/v1/ports", "1.31", `{"node_uuid":"`+id+`","address":"02:00:00:72:69:01"}`, 201)
	wait := func(state string, target any) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			got := c.call("GET", "/v1/nodes/"+id, "1.31", nil, 200)
			if got["provision_state"] == state && got["target_provision_state"] == target && got["reservation"] == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("node never reached %s: %v", state, got["provision_state"])
			}
		}
	}
	c.call("PUT", "/v1/nodes/n3/states/provision", "1.31", `{"target":"manage"}`, 202)
	wait("manageable", nil)
	c.call("PUT", "/v1/nodes/n3/states/provision", "1.31", `{"target":"inspect"}`, 202)
	wait("inspecting", "manageable") // inspect wait, as 1.31 names it
	c.call("POST", "/v1/continue_inspection", "1.1", ipaInspection(t, false), 406)
	c.call("POST", "/v1/continue_inspection", "1.84", ipaInspection(t, false), 406)
	c.call("GET", "/v1/nodes/"+id+"/inventory", "1.81", nil, 406)
	time.Sleep(100 * time.Millisecond)
	// 1.31 shows inspect wait as inspecting; the conductor never got the data.
	if got := c.call("GET", "/v1/nodes/"+id, "1.31", nil, 200); got["provision_state"] != "inspecting" || got["target_provision_state"] != "manageable" {
		t.Errorf("node after the capped POST: %v → %v, want still waiting", got["provision_state"], got["target_provision_state"])
	}
}

// TestAgentInspectionNeedsARamdisk: a node with the agent interface and
// no ramdisk in driver_info is refused before its state changes (400, as
// Ironic's inspect validate), and GET validate says why.
func TestAgentInspectionNeedsARamdisk(t *testing.T) {
	c := newInspectionStack(t)
	n := c.call("POST", "/v1/nodes", "1.84", `{"name":"bare","driver":"fake-hardware","inspect_interface":"agent"}`, 201)
	id := n["uuid"].(string)
	c.call("PUT", "/v1/nodes/bare/states/provision", "1.84", `{"target":"manage"}`, 202)
	c.waitState(id, "manageable")
	v := c.call("GET", "/v1/nodes/bare/validate", "1.84", nil, 200)["inspect"].(map[string]any)
	if v["result"] != false || !strings.Contains(v["reason"].(string), "deploy_iso") {
		t.Errorf("validate inspect = %v", v)
	}
	out := c.call("PUT", "/v1/nodes/bare/states/provision", "1.84", `{"target":"inspect"}`, 400)
	if !strings.Contains(out["error_message"].(string), "no agent ramdisk to boot") {
		t.Errorf("inspect without a ramdisk: %v", out)
	}
	if st := c.call("GET", "/v1/nodes/bare", "1.84", nil, 200)["provision_state"]; st != "manageable" {
		t.Errorf("state after the refused inspect = %v", st)
	}
}
