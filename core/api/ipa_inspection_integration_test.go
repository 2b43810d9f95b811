package api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/api"
)

// TestRealIPAInspection: in-band inspection with the unmodified agent
// (the rig of TestRealIPA; the agent runs its inspection collectors, as
// shared/peers/ipa's ipa-inspect.conf overlay turns them on, but
// dmi-decode, which finds no /dev/mem in the namespace and reports that as
// the ramdisk's error, failing inspection as Ironic does). A manageable
// node with the agent inspect interface is inspected: the agent's POST to
// /v1/continue_inspection finds it by its port's MAC, the stored inventory
// holds the loop disk and the namespace NIC with its MAC, the properties
// are set and the port of the NIC the agent says it booted from (BOOTIF)
// is pxe_enabled. A heartbeat with a wrong token is refused. A second
// inspection, with an inspection rule (1.96) that marks the plugin data,
// replaces the stored data, and the node's history says so.
func TestRealIPAInspection(t *testing.T) {
	r := newIPARigAt(t, "1.96")
	r.collectors = "default,logs,pci-devices,numa-topology"
	r.bootif = "01-" + strings.ReplaceAll(r.mac, ":", "-")

	n := r.call("POST", "/v1/nodes", map[string]any{"name": "ipa-inspect", "driver": "fake-hardware",
		"inspect_interface": "agent", "driver_info": map[string]any{"deploy_iso": "http://images.test/ipa.iso"}}, 201)
	id := n["uuid"].(string)
	port := r.call("POST", "/v1/ports", map[string]any{"node_uuid": id, "address": r.mac, "pxe_enabled": false}, 201)
	r.call("PUT", "/v1/nodes/"+id+"/states/provision", map[string]any{"target": "manage"}, 202)
	r.waitState(id, "manageable", 30*time.Second)

	inspect := func() map[string]any {
		t.Helper()
		t0 := time.Now()
		r.call("PUT", "/v1/nodes/"+id+"/states/provision", map[string]any{"target": "inspect"}, 202)
		r.waitState(id, "inspect wait", 30*time.Second)
		r.startAgent()
		done := r.waitState(id, "manageable", 120*time.Second)
		r.stopAgent()
		t.Logf("in-band inspection: %v", time.Since(t0).Round(time.Millisecond))
		return done
	}
	done := inspect()
	props := done["properties"].(map[string]any)
	for _, k := range []string{"cpus", "memory_mb"} {
		if v, _ := props[k].(float64); v <= 0 {
			t.Errorf("properties[%s] = %v, want a positive count", k, props[k])
		}
	}
	if props["cpu_arch"] == "" || props["cpu_arch"] == nil || props["local_gb"] != float64(0) ||
		!strings.HasPrefix(props["capabilities"].(string), "boot_mode:") {
		t.Errorf("properties %v, want cpu_arch, local_gb 0 (a 1 GiB loop disk less 1) and a boot mode", props)
	}
	if done["power_state"] != "power off" || done["last_error"] != nil || done["inspection_finished_at"] == nil {
		t.Errorf("after inspection: power %v, last_error %v, finished %v", done["power_state"], done["last_error"], done["inspection_finished_at"])
	}
	ports := r.call("GET", "/v1/nodes/"+id+"/ports/detail", nil, 200)["ports"].([]any)
	if len(ports) != 1 || ports[0].(map[string]any)["uuid"] != port["uuid"] || ports[0].(map[string]any)["pxe_enabled"] != true {
		t.Errorf("ports %v, want the NIC's port, pxe_enabled (the agent booted from it)", ports)
	}
	stored := r.call("GET", "/v1/nodes/"+id+"/inventory", nil, 200)
	inv := stored["inventory"].(map[string]any)
	var disks, macs []string
	for _, d := range inv["disks"].([]any) {
		disks = append(disks, d.(map[string]any)["name"].(string))
	}
	for _, i := range inv["interfaces"].([]any) {
		macs = append(macs, i.(map[string]any)["mac_address"].(string))
	}
	if len(disks) != 1 || disks[0] != r.loop {
		t.Errorf("stored disks %v, want only %s", disks, r.loop)
	}
	if !strings.Contains(strings.Join(macs, " "), r.mac) {
		t.Errorf("stored interfaces %v, want the namespace NIC %s", macs, r.mac)
	}
	if boot := inv["boot"].(map[string]any); boot["pxe_interface"] != r.bootif {
		t.Errorf("inventory.boot %v, want pxe_interface %s", boot, r.bootif)
	}
	if _, ok := stored["plugin_data"].(map[string]any)["logs"]; ok {
		t.Error("the agent's logs were stored")
	}

	req, _ := http.NewRequest("POST", r.apiURL+"/v1/heartbeat/"+id,
		strings.NewReader(`{"callback_url":"http://`+r.agentIP+`:9999","agent_token":"forged"}`))
	req.Header.Set(api.HeaderVersion, "1.68")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "Invalid or missing agent token received.") {
		t.Errorf("heartbeat with a wrong token: %d %s", resp.StatusCode, body)
	}

	r.call("POST", "/v1/inspection_rules", map[string]any{"description": "mark the second inspection",
		"conditions": []any{map[string]any{"op": "eq", "args": map[string]any{"values": []any{"{inventory[boot][pxe_interface]}", r.bootif}}}},
		"actions":    []any{map[string]any{"op": "set-plugin-data", "args": map[string]any{"path": "rivet.second", "value": "{node.name}"}}}}, 201)
	inspect()
	pd := r.call("GET", "/v1/nodes/"+id+"/inventory", nil, 200)["plugin_data"].(map[string]any)
	if mark, _ := pd["rivet"].(map[string]any); mark["second"] != "ipa-inspect" {
		t.Errorf("stored plugin_data.rivet = %v, want the second inspection's mark", pd["rivet"])
	}
	hist := r.call("GET", "/v1/nodes/"+id+"/history?detail=True", nil, 200)["history"].([]any)
	replaced := 0
	for _, h := range hist {
		e := h.(map[string]any)
		if e["event_type"] == "introspection" && strings.Contains(e["event"].(string), "Inspection data of node "+id+" replaced") {
			replaced++
		}
	}
	if replaced != 1 {
		t.Errorf("history %v, want one entry saying the second inspection replaced the data", hist)
	}
}
