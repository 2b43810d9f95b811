package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
)

// inspectedNode enrolls a fake-hardware node with the agent inspect
// interface and a port for the namespace NIC, inspects it with IPA's
// captured data and returns its UUID once it is manageable again.
func inspectedNode(c inspClient, name string) string {
	c.t.Helper()
	n := c.call("POST", "/v1/nodes", "1.84", `{"name":"`+name+`","driver":"fake-hardware","inspect_interface":"agent","driver_info":{"deploy_iso":"http://images.test/ipa.iso"}}`, 201)
	id := n["uuid"].(string)
	c.call("POST", "/v1/ports", "1.84", `{"node_uuid":"`+id+`","address":"02:00:00:72:69:01"}`, 201)
	c.call("PUT", "/v1/nodes/"+id+"/states/provision", "1.84", `{"target":"manage"}`, 202)
	c.waitState(id, "manageable")
	c.call("PUT", "/v1/nodes/"+id+"/states/provision", "1.84", `{"target":"inspect"}`, 202)
	c.waitState(id, "inspect wait")
	c.call("POST", "/v1/continue_inspection", "1.84", ipaInspection(c.t, false), 202)
	c.waitState(id, "manageable")
	return id
}

// TestGophercloudGetInventory: gophercloud v2's nodes.GetInventory (what
// Metal3's baremetal-operator reads HardwareDetails from) decodes the
// stored inventory and the standard plugin data.
func TestGophercloudGetInventory(t *testing.T) {
	c := newInspectionStack(t)
	id := inspectedNode(c, "gc-inv")
	gc, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: c.url + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	gc.Microversion = "1.81"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	data, err := nodes.GetInventory(ctx, gc, id).Extract()
	if err != nil {
		t.Fatalf("GetInventory: %v", err)
	}
	inv := data.Inventory
	if len(inv.Disks) != 1 || inv.Disks[0].Name != "/dev/loop0" || inv.Disks[0].Size != 1<<30 {
		t.Errorf("disks = %+v", inv.Disks)
	}
	if len(inv.Interfaces) != 1 || inv.Interfaces[0].MACAddress != "02:00:00:72:69:01" {
		t.Errorf("interfaces = %+v", inv.Interfaces)
	}
	if inv.CPU.Count != 2 || inv.CPU.Architecture != "x86_64" || inv.Memory.PhysicalMb != 24576 || inv.Boot.CurrentBootMode != "bios" {
		t.Errorf("cpu %+v memory %+v boot %+v", inv.CPU, inv.Memory, inv.Boot)
	}
	pd, err := data.PluginData.AsStandardData()
	if err != nil {
		t.Fatalf("plugin data: %v", err)
	}
	if len(pd.MACs) != 1 || pd.MACs[0] != "02:00:00:72:69:01" || pd.AllInterfaces["ipa.1"].MACAddress != "02:00:00:72:69:01" {
		t.Errorf("standard plugin data: macs %v, all_interfaces %+v", pd.MACs, pd.AllInterfaces)
	}
	gc.Microversion = "1.80"
	if _, err := nodes.GetInventory(ctx, gc, id).Extract(); err == nil {
		t.Error("GetInventory at 1.80 succeeded; Ironic answers 404 below 1.81")
	}
}
