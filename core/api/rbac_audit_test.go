package api

import (
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
)

// TestRBACAuditedNodeRoutes: the node routes of 0.3 take Ironic's default
// rules (common/policy.py) for node A (owner p1, lessee p2): firmware,
// indicators, vmedia and children are read by the project (owner and
// lessee); boot mode, secure boot and vmedia are changed by a project
// member (the lessee's too); an indicator, RAID and the console are the
// owner member's; the provision verbs (service among them) the owner
// member's or the lessee admin's; /nodes/{node}/volume itself is the
// system's. Another project's node is not found; a request that passes
// the rule reaches the handler (the fake conductor's answer, or Ironic's
// 400/409 for the node's state).
func TestRBACAuditedNodeRoutes(t *testing.T) {
	e := newRBACEnvAt(t, true, maxAPI03)
	a, c := "/v1/nodes/"+e.a, "/v1/nodes/"+e.c
	uefi, sb := map[string]any{"target": "uefi"}, map[string]any{"target": true}
	led := map[string]any{"state": "ON"}
	media := map[string]any{"device_type": "cdrom", "image_url": "http://images.test/boot.iso"}
	raid := map[string]any{"logical_disks": []any{}}
	console := map[string]any{"enabled": true}
	service := map[string]any{"target": "service", "service_steps": []any{map[string]any{"interface": "bios", "step": "factory_reset"}}}
	runRBACCases(t, e, maxAPI03, []rbacCase{
		// baremetal:node:firmware:get, SYSTEM_OR_PROJECT_READER
		{"p1reader", "GET", a + "/firmware", nil, 200, ""},
		{"p2member", "GET", a + "/firmware", nil, 200, ""},
		{"p3member", "GET", a + "/firmware", nil, 404, ""},
		{"sysread", "GET", c + "/firmware", nil, 200, ""},
		// baremetal:node:get for children (Ironic: forbidden is not found)
		{"p2member", "GET", a + "/children", nil, 200, ""},
		{"p3member", "GET", a + "/children", nil, 404, ""},
		{"sysread", "GET", c + "/children", nil, 200, ""},
		// baremetal:node:set_boot_mode / set_secure_boot, SYSTEM_OR_PROJECT_MEMBER
		{"p1reader", "PUT", a + "/states/boot_mode", uefi, 403, "baremetal:node:set_boot_mode"},
		{"sysread", "PUT", a + "/states/boot_mode", uefi, 403, "baremetal:node:set_boot_mode"},
		{"p3member", "PUT", a + "/states/boot_mode", uefi, 404, ""},
		{"p2member", "PUT", a + "/states/boot_mode", uefi, 400, ""},
		{"sysadmin", "PUT", a + "/states/boot_mode", uefi, 400, ""},
		{"p1reader", "PUT", a + "/states/secure_boot", sb, 403, "baremetal:node:set_secure_boot"},
		{"p2member", "PUT", a + "/states/secure_boot", sb, 400, ""},
		// baremetal:node:get_indicator_state (project reader) and
		// set_indicator_state (SYSTEM_MEMBER_OR_OWNER_MEMBER: not the lessee)
		{"p1reader", "GET", a + "/management/indicators", nil, 400, ""},
		{"p2member", "GET", a + "/management/indicators/led@system", nil, 400, ""},
		{"p3member", "GET", a + "/management/indicators/led@system", nil, 404, ""},
		{"p1reader", "PUT", a + "/management/indicators/led@system", led, 403, "baremetal:node:set_indicator_state"},
		{"p2admin", "PUT", a + "/management/indicators/led@system", led, 403, "baremetal:node:set_indicator_state"},
		{"p1member", "PUT", a + "/management/indicators/led@system", led, 400, ""},
		// baremetal:node:vmedia:get (project reader), :attach and :detach
		// (project member, the lessee's too)
		{"p2member", "GET", a + "/vmedia", nil, 400, ""},
		{"p3member", "GET", a + "/vmedia", nil, 404, ""},
		{"p1reader", "POST", a + "/vmedia", media, 403, "baremetal:node:vmedia:attach"},
		{"p1reader", "DELETE", a + "/vmedia", nil, 403, "baremetal:node:vmedia:detach"},
		{"sysread", "DELETE", a + "/vmedia", nil, 403, "baremetal:node:vmedia:detach"},
		{"p2member", "POST", a + "/vmedia", media, 400, ""},
		{"p2member", "DELETE", a + "/vmedia", nil, 400, ""},
		// baremetal:node:set_raid_state, get_console, set_console_state:
		// SYSTEM_MEMBER_OR_OWNER_MEMBER
		{"p2admin", "PUT", a + "/states/raid", raid, 403, "baremetal:node:set_raid_state"},
		{"p1reader", "PUT", a + "/states/raid", raid, 403, "baremetal:node:set_raid_state"},
		{"p2admin", "GET", a + "/states/console", nil, 403, "baremetal:node:get_console"},
		{"p2admin", "PUT", a + "/states/console", console, 403, "baremetal:node:set_console_state"},
		{"p3member", "GET", a + "/states/console", nil, 404, ""},
		// baremetal:node:set_provision_state for the service verb
		// (:service_steps has the same check string): the lessee's admin,
		// not its member; the node is not active, so passing is the
		// state's 400.
		{"p2member", "PUT", a + "/states/provision", service, 403, "baremetal:node:set_provision_state"},
		{"p1reader", "PUT", a + "/states/provision", service, 403, "baremetal:node:set_provision_state"},
		{"p2admin", "PUT", a + "/states/provision", service, 400, ""},
		{"p1member", "PUT", a + "/states/provision", service, 400, ""},
		// the node's volume: /volume the system's, its lists the project's
		{"p1admin", "GET", a + "/volume", nil, 403, "baremetal:volume:get"},
		{"sysread", "GET", a + "/volume", nil, 200, ""},
		{"p2member", "GET", a + "/volume/connectors", nil, 200, ""},
		{"p3member", "GET", a + "/volume/targets", nil, 404, ""},
		// baremetal:node:update:network_data: SYSTEM_MEMBER_OR_OWNER_MEMBER
		{"p2member", "PATCH", a, []map[string]any{{"op": "add", "path": "/network_data", "value": map[string]any{}}}, 403, "baremetal:node:update:network_data"},
		{"p1member", "PATCH", a, []map[string]any{{"op": "add", "path": "/network_data", "value": map[string]any{}}}, 200, ""},
		// the system's: a driver's RAID properties, /metrics
		{"p1admin", "GET", "/v1/drivers/fake-hardware/raid/logical_disk_properties", nil, 403, "baremetal:driver:get_raid_logical_disk_properties"},
		{"p1admin", "GET", "/metrics", nil, 403, "rivet:metrics:get"},
		{"p3member", "GET", "/metrics", nil, 403, "rivet:metrics:get"},
		{"sysread", "GET", "/metrics", nil, 200, ""},
	})
	// The owner member passes set_raid_state; fake-hardware has no RAID
	// interface enabled, which is Ironic's 404 naming the driver (not the
	// node's concealment).
	if got := e.asMust(404, "p1member", "PUT", a+"/states/raid", maxAPI03, raid).Fault(t); !strings.Contains(got, "does not support raid") {
		t.Errorf("p1member PUT states/raid: %q", got)
	}
}

// TestRBACChassisUpdateIsSystemMember: baremetal:chassis:update is
// SYSTEM_MEMBER (create and delete are the admin's).
func TestRBACChassisUpdateIsSystemMember(t *testing.T) {
	e := newRBACEnvAt(t, true, maxAPI03)
	id := e.asMust(201, "root", "POST", "/v1/chassis", maxAPI03, map[string]any{"description": "rack 1"}).JSON(t)["uuid"].(string)
	patch := []map[string]any{{"op": "replace", "path": "/description", "value": "rack 2"}}
	runRBACCases(t, e, maxAPI03, []rbacCase{
		{"sysread", "PATCH", "/v1/chassis/" + id, patch, 403, "baremetal:chassis:update"},
		{"p1admin", "PATCH", "/v1/chassis/" + id, patch, 403, "baremetal:chassis:update"},
		{"sysmem", "PATCH", "/v1/chassis/" + id, patch, 200, ""},
		{"sysmem", "DELETE", "/v1/chassis/" + id, nil, 403, "baremetal:chassis:delete"},
	})
}

// TestRBACOwnerOfActiveNode: giving an active node an owner needs
// baremetal:node:update_owner_provisioned (SYSTEM_ADMIN); a system member,
// who passes baremetal:node:update:owner, gets Ironic's 409.
func TestRBACOwnerOfActiveNode(t *testing.T) {
	e := newRBACEnvAt(t, true, maxAPI03)
	setNode(t, e.env, e.a, func(n *objects.Node) { n.ProvisionState = "active" })
	owner := func(p string) []map[string]any {
		return []map[string]any{{"op": "replace", "path": "/owner", "value": p}}
	}
	runRBACCases(t, e, maxAPI03, []rbacCase{
		{"p1admin", "PATCH", "/v1/nodes/" + e.a, owner("p3"), 403, "baremetal:node:update:owner"},
		{"sysmem", "PATCH", "/v1/nodes/" + e.a, owner("p3"), 409, ""},
		{"sysmem", "PATCH", "/v1/nodes/" + e.a, []map[string]any{{"op": "remove", "path": "/owner"}}, 200, ""},
		{"sysadmin", "PATCH", "/v1/nodes/" + e.a, owner("p1"), 200, ""},
	})
	if got := e.asMust(409, "sysmem", "PATCH", "/v1/nodes/"+e.a, maxAPI03, owner("p3")).Fault(t); got != `Cannot update owner of node "`+e.a+`" while it is in state "active". `+
		"Only a system admin (baremetal:node:update_owner_provisioned) may change it; unprovision the node first." {
		t.Errorf("409: %q", got)
	}
	// Not active: the system member changes it.
	setNode(t, e.env, e.a, func(n *objects.Node) { n.ProvisionState = "manageable" })
	e.asMust(200, "sysmem", "PATCH", "/v1/nodes/"+e.a, maxAPI03, owner("p3"))
}

// TestRBACRunbookUse: a provision request naming a runbook needs
// baremetal:runbook:use (RUNBOOK_ADMIN over the runbook's owner): the
// owning project's admin or a system member; a project member, another
// project, and any project for a public (ownerless) runbook are 403.
// Passing, the request goes on to the node's traits (400: not approved).
func TestRBACRunbookUse(t *testing.T) {
	e := newRBACEnvAt(t, true, maxAPI03)
	setNode(t, e.env, e.a, func(n *objects.Node) { n.ProvisionState = "manageable" })
	mine := runbookBody("CUSTOM_MINE")
	mine["owner"] = "p1"
	e.asMust(201, "root", "POST", "/v1/runbooks", maxAPI03, mine)
	pub := runbookBody("CUSTOM_PUBLIC")
	pub["public"] = true
	e.asMust(201, "root", "POST", "/v1/runbooks", maxAPI03, pub)
	clean := func(rb string) map[string]any { return map[string]any{"target": "clean", "runbook": rb} }
	runRBACCases(t, e, maxAPI03, []rbacCase{
		{"p1member", "PUT", "/v1/nodes/" + e.a + "/states/provision", clean("CUSTOM_MINE"), 403, "baremetal:runbook:use"},
		{"p2admin", "PUT", "/v1/nodes/" + e.a + "/states/provision", clean("CUSTOM_MINE"), 403, "baremetal:runbook:use"},
		{"p1admin", "PUT", "/v1/nodes/" + e.a + "/states/provision", clean("CUSTOM_PUBLIC"), 403, "baremetal:runbook:use"},
		{"p1admin", "PUT", "/v1/nodes/" + e.a + "/states/provision", clean("CUSTOM_MINE"), 400, ""},
		{"sysmem", "PUT", "/v1/nodes/" + e.a + "/states/provision", clean("CUSTOM_PUBLIC"), 400, ""},
		{"p1admin", "PUT", "/v1/nodes/" + e.a + "/states/provision", clean("CUSTOM_NONE"), 404, ""},
	})
}
