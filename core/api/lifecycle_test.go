package api

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
)

// TestLifecycleNeverLeaksSecrets drives a node through its whole life at
// every response shape and fails if the BMC password (or another secret)
// appears in any response, PATCH replies and errors included.
func TestLifecycleNeverLeaksSecrets(t *testing.T) {
	const secret = "Bmc-Pa55word!"
	e := newEnv(t)
	var bodies [][]byte
	do := func(code int, method, path string, body any) resp {
		r := e.must(code, method, path, "latest", body)
		bodies = append(bodies, r.Body)
		return r
	}
	n := do(http.StatusCreated, "POST", "/v1/nodes", map[string]any{"driver": "fake-hardware", "name": "n1",
		"driver_info": map[string]any{"ipmi_password": secret, "ipmi_username": "admin", "ipmi_address": "1.2.3.4",
			"nested": map[string]any{"redfish_password": secret}, "snmp_auth_key": secret, "auth_token": secret},
		"instance_info": map[string]any{"image_url": "http://x/" + secret, "configdrive": secret, "admin_password": secret}}).JSON(t)
	if di := n["driver_info"].(map[string]any); di["ipmi_password"] != Masked || di["ipmi_username"] != "admin" ||
		di["nested"].(map[string]any)["redfish_password"] != Masked || di["snmp_auth_key"] != Masked {
		t.Errorf("driver_info = %v", di)
	}
	if ii := n["instance_info"].(map[string]any); ii["image_url"] != Masked || ii["configdrive"] != Masked {
		t.Errorf("instance_info = %v", ii)
	}
	id := n["uuid"].(string)
	do(http.StatusOK, "PATCH", "/v1/nodes/n1", []map[string]any{{"op": "replace", "path": "/driver_info/ipmi_address", "value": "5.6.7.8"}})
	do(http.StatusBadRequest, "PATCH", "/v1/nodes/n1", []map[string]any{{"op": "replace", "path": "/driver_info/nope/x", "value": secret}})
	do(http.StatusCreated, "POST", "/v1/ports", map[string]any{"node_uuid": id, "address": "52:54:00:12:34:56"})
	for _, verb := range []string{"manage", "provide", "active"} {
		do(http.StatusAccepted, "PUT", "/v1/nodes/n1/states/provision", map[string]any{"target": verb})
	}
	do(http.StatusAccepted, "PUT", "/v1/nodes/n1/states/power", map[string]any{"target": "power off"})
	do(http.StatusConflict, "DELETE", "/v1/nodes/n1", nil)
	for _, path := range []string{"/v1/nodes", "/v1/nodes/detail", "/v1/nodes/n1", "/v1/nodes/n1/states",
		"/v1/nodes/n1/validate", "/v1/nodes/n1/ports", "/v1/ports/detail", "/v1/nodes?fields=driver_info,instance_info"} {
		do(http.StatusOK, "GET", path, nil)
	}
	do(http.StatusAccepted, "PUT", "/v1/nodes/n1/states/provision", map[string]any{"target": "deleted"})
	do(http.StatusNoContent, "DELETE", "/v1/nodes/n1", nil)

	// The stored password is intact: masking happens only on the way out.
	// (Checked before delete through the store would need the row; the
	// PATCH above kept it because the document it applied to was unmasked.)
	for i, b := range bodies {
		if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte("Pa55word")) {
			t.Errorf("response %d leaks a secret: %s", i, b)
		}
	}
}

func TestPatchKeepsUnmaskedSecrets(t *testing.T) {
	e := newEnv(t)
	id := e.node(map[string]any{"driver_info": map[string]any{"ipmi_password": "pw", "ipmi_address": "a"}})
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "latest", []map[string]any{{"op": "replace", "path": "/driver_info/ipmi_address", "value": "b"}})
	n, err := e.store.GetNode(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if n.DriverInfo["ipmi_password"] != "pw" || n.DriverInfo["ipmi_address"] != "b" {
		t.Errorf("stored driver_info = %v", n.DriverInfo)
	}
}

func TestNodePatchRules(t *testing.T) {
	e := newEnv(t)
	id := e.node(map[string]any{"name": "n1"})
	// Ironic's PATCH_ALLOWED_FIELDS, in its order, less network_data (not
	// in Rivet yet): the message names them at every version.
	allowed := "automated_clean, bios_interface, boot_interface, chassis_uuid, conductor_group, console_interface, " +
		"deploy_interface, description, disable_power_off, driver, driver_info, extra, inspect_interface, " +
		"instance_info, instance_name, instance_uuid, lessee, maintenance, management_interface, name, network_data, network_interface, " +
		"owner, power_interface, properties, protected, protected_reason, raid_interface, rescue_interface, resource_class, " +
		"retired, retired_reason, shard, storage_interface, vendor_interface, parent_node, firmware_interface"
	tests := map[string]struct {
		ver   string
		patch any
		code  int
		fault string
	}{
		"root add unknown":    {"latest", []map[string]any{{"op": "add", "path": "/foo", "value": 1}}, 400, "Adding a new attribute (/foo) to the root of the resource is not allowed"},
		"read-only":           {"latest", []map[string]any{{"op": "replace", "path": "/provision_state", "value": "active"}}, 400, "Cannot patch /provision_state. Only the following can be updated: " + allowed},
		"newer field":         {"1.20", []map[string]any{{"op": "replace", "path": "/resource_class", "value": "x"}}, 406, "Request not acceptable."},
		"nested add creates":  {"latest", []map[string]any{{"op": "add", "path": "/properties/capabilities/boot", "value": "uefi"}}, 200, ""},
		"bad op":              {"latest", []map[string]any{{"op": "move", "path": "/extra", "from": "/x"}}, 400, ""},
		"not a list":          {"latest", map[string]any{"op": "add"}, 400, ""},
		"malformed":           {"latest", "[{", 400, ""},
		"remove missing":      {"latest", []map[string]any{{"op": "remove", "path": "/extra/nope"}}, 400, ""},
		"wrong type":          {"latest", []map[string]any{{"op": "replace", "path": "/maintenance", "value": "yes"}}, 400, ""},
		"invalid name":        {"latest", []map[string]any{{"op": "replace", "path": "/name", "value": "a b"}}, 400, "Node " + id + ": Cannot change name to invalid name 'a b'"},
		"remove name":         {"latest", []map[string]any{{"op": "remove", "path": "/name"}}, 200, ""},
		"html is not escaped": {"latest", []map[string]any{{"op": "add", "path": "/extra/h", "value": "<&>"}}, 200, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := e.must(tc.code, "PATCH", "/v1/nodes/"+id, tc.ver, tc.patch)
			if tc.fault != "" && r.Fault(t) != tc.fault {
				t.Errorf("fault %q, want %q", r.Fault(t), tc.fault)
			}
			if name == "html is not escaped" && !bytes.Contains(r.Body, []byte(`"h":"<&>"`)) {
				t.Errorf("body %s escapes HTML", r.Body)
			}
		})
	}
}

func TestStateEndpoints(t *testing.T) {
	e := newEnv(t)
	id := e.node(map[string]any{"name": "n1"})
	tests := []struct {
		name, method, path string
		body               any
		code               int
		fault              string
	}{
		{"power on", "PUT", "/states/power", map[string]any{"target": "power on"}, 202, ""},
		{"soft power off is 1.27", "PUT", "/states/power", map[string]any{"target": "soft power off"}, 406, "Request not acceptable."},
		{"timeout is 1.27", "PUT", "/states/power", map[string]any{"target": "power on", "timeout": 10}, 406, ""},
		{"bogus power", "PUT", "/states/power", map[string]any{"target": "bogus"}, 400, `The requested action "bogus" can not be performed on node "n1" while it is in state "power on".`},
		{"invalid transition", "PUT", "/states/provision", map[string]any{"target": "provide"}, 400, `The requested action "provide" can not be performed on node "` + id + `" while it is in state "enroll".`},
		{"clean needs steps", "PUT", "/states/provision", map[string]any{"target": "clean"}, 400, `"clean_steps" is required when setting target provision state to clean`},
		{"unknown attribute", "PUT", "/states/provision", map[string]any{"target": "manage", "x": 1}, 400, "Unknown attribute for argument target: x"},
		{"states", "GET", "/states", nil, 200, ""},
		{"console get", "GET", "/states/console", nil, 200, ""},
		{"console put", "PUT", "/states/console", map[string]any{"enabled": true}, 400, "Driver fake-hardware does not support console (disabled or not implemented)."},
		{"boot device set", "PUT", "/management/boot_device", map[string]any{"boot_device": "pxe", "persistent": true}, 204, ""},
		{"boot device bad", "PUT", "/management/boot_device", map[string]any{"boot_device": "floppy"}, 400, "Invalid boot device floppy specified."},
		{"boot device get", "GET", "/management/boot_device", nil, 200, ""},
		{"supported", "GET", "/management/boot_device/supported", nil, 200, ""},
		{"validate", "GET", "/validate", nil, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.must(tc.code, tc.method, "/v1/nodes/n1"+tc.path, "1.26", tc.body)
			if tc.fault != "" && r.Fault(t) != tc.fault {
				t.Errorf("fault %q, want %q", r.Fault(t), tc.fault)
			}
		})
	}
	n, _ := e.store.GetNode(t.Context(), id)
	holder := "cond-a"
	n.Reservation = &holder
	if _, err := e.store.DB().Bun().NewUpdate().Table("nodes").Set("reservation = ?", holder).Where("uuid = ?", id).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusConflict, "PUT", "/v1/nodes/n1/states/provision", "1.26", map[string]any{"target": "provide"})
	e.must(http.StatusConflict, "PUT", "/v1/nodes/n1/states/power", "1.26", map[string]any{"target": "power off"})
	if got := e.do("GET", "/v1/nodes/n1/management/boot_device", "1.26", nil).JSON(t); fmt.Sprint(got["boot_device"]) != "pxe" {
		t.Errorf("boot device = %v", got)
	}
}

func TestNodeStateRules(t *testing.T) {
	e := newEnv(t)
	ch := e.must(http.StatusCreated, "POST", "/v1/chassis", "1.1", map[string]any{}).JSON(t)["uuid"].(string)
	id := e.node(map[string]any{"name": "n1", "chassis_uuid": ch})
	other := e.node(nil)
	port := e.must(http.StatusCreated, "POST", "/v1/ports", "1.26", map[string]any{"node_uuid": other, "address": "52:54:00:00:01:01"}).JSON(t)["uuid"].(string)
	for _, v := range []string{"manage", "provide"} {
		e.must(http.StatusAccepted, "PUT", "/v1/nodes/n1/states/provision", "1.26", map[string]any{"target": v})
	}
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/n1/maintenance", "1.26", nil)
	if got := e.must(http.StatusBadRequest, "PUT", "/v1/nodes/n1/states/provision", "1.26", map[string]any{"target": "active"}).Fault(t); got != "The provisioning operation can't be performed on node "+id+" because it's in maintenance mode." {
		t.Errorf("deploy in maintenance: %q", got)
	}
	e.must(http.StatusAccepted, "DELETE", "/v1/nodes/n1/maintenance", "1.26", nil)
	if _, err := e.store.DB().Bun().NewUpdate().Table("nodes").Set("provision_state = 'deploying', target_provision_state = 'active'").
		Where("uuid = ?", id).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := e.must(http.StatusConflict, "PATCH", "/v1/nodes/n1", "1.26", []map[string]any{{"op": "add", "path": "/extra/a", "value": 1}}).Fault(t); got != "Node n1 can not be updated while a state transition is in progress." {
		t.Errorf("patch mid-transition: %q", got)
	}
	e.must(http.StatusConflict, "DELETE", "/v1/nodes/n1", "1.26", nil)
	if _, err := e.store.DB().Bun().NewUpdate().Table("nodes").Set("provision_state = 'clean wait', target_provision_state = 'available'").
		Where("uuid = ?", id).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := e.must(http.StatusBadRequest, "PUT", "/v1/nodes/n1/states/power", "1.26", map[string]any{"target": "power on"}).Fault(t); got != `The requested action "power on" can not be performed on node "n1" while it is in state "clean wait".` {
		t.Errorf("power while cleaning: %q", got)
	}
	list := e.must(http.StatusOK, "GET", "/v1/nodes?chassis_uuid="+ch, "1.26", nil).JSON(t)["nodes"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["uuid"] != id {
		t.Errorf("chassis_uuid filter: %v", list)
	}
	ports := e.must(http.StatusOK, "GET", "/v1/ports?node="+other, "1.26", nil).JSON(t)["ports"].([]any)
	if len(ports) != 1 || ports[0].(map[string]any)["uuid"] != port {
		t.Errorf("ports node filter: %v", ports)
	}
	if n := len(e.must(http.StatusOK, "GET", "/v1/ports?node=n1", "1.26", nil).JSON(t)["ports"].([]any)); n != 0 {
		t.Errorf("ports of n1: %d", n)
	}
}
