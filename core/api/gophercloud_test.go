package api_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"
)

// TestGophercloudClient drives gophercloud v2's baremetal client (what
// Metal3 uses), which checks exact status codes, through a node's life
// against the API over a real conductor.
func TestGophercloudClient(t *testing.T) {
	srv := httptest.NewServer(newStack(t))
	defer srv.Close()
	c, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: srv.URL + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	c.Microversion = "1.26"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	n, err := nodes.Create(ctx, c, nodes.CreateOpts{Name: "gc1", Driver: "fake-hardware",
		DriverInfo: map[string]any{"ipmi_password": "pw", "ipmi_address": "10.0.0.2"}}).Extract()
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if n.DriverInfo["ipmi_password"] != "******" || n.ProvisionState != "enroll" {
		t.Errorf("created: driver_info %v, state %s", n.DriverInfo, n.ProvisionState)
	}
	if _, err := ports.Create(ctx, c, ports.CreateOpts{NodeUUID: n.UUID, Address: "52:54:00:00:00:dd"}).Extract(); err != nil {
		t.Fatalf("ports.Create: %v", err)
	}
	if _, err := nodes.Update(ctx, c, n.UUID, nodes.UpdateOpts{nodes.UpdateOperation{Op: nodes.AddOp, Path: "/extra/rack", Value: "r2"}}).Extract(); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if _, err := nodes.Validate(ctx, c, n.UUID).Extract(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if err := nodes.SetBootDevice(ctx, c, n.UUID, nodes.BootDeviceOpts{BootDevice: "pxe"}).ExtractErr(); err != nil {
		t.Fatalf("SetBootDevice: %v", err)
	}
	if err := nodes.SetMaintenance(ctx, c, n.UUID, nodes.MaintenanceOpts{Reason: "test"}).ExtractErr(); err != nil {
		t.Fatalf("SetMaintenance: %v", err)
	}
	if err := nodes.UnsetMaintenance(ctx, c, n.UUID).ExtractErr(); err != nil {
		t.Fatalf("UnsetMaintenance: %v", err)
	}
	for _, step := range []struct {
		target nodes.TargetProvisionState
		state  nodes.ProvisionState
	}{{nodes.TargetManage, nodes.Manageable}, {nodes.TargetProvide, nodes.Available}, {nodes.TargetActive, nodes.Active}, {nodes.TargetDeleted, nodes.Available}} {
		if err := nodes.ChangeProvisionState(ctx, c, n.UUID, nodes.ProvisionStateOpts{Target: step.target}).ExtractErr(); err != nil {
			t.Fatalf("ChangeProvisionState %s: %v", step.target, err)
		}
		if err := nodes.WaitForProvisionState(ctx, c, n.UUID, step.state); err != nil {
			t.Fatalf("wait for %s: %v", step.state, err)
		}
	}
	if err := nodes.ChangePowerState(ctx, c, n.UUID, nodes.PowerStateOpts{Target: nodes.PowerOff}).ExtractErr(); err != nil {
		t.Fatalf("ChangePowerState: %v", err)
	}
	if err := nodes.ChangePowerState(ctx, c, n.UUID, nodes.PowerStateOpts{Target: nodes.SoftPowerOff}).ExtractErr(); err == nil {
		t.Error("soft power off at 1.26 was accepted")
	}
	pages, err := nodes.ListDetail(c, nodes.ListOpts{}).AllPages(ctx)
	if err != nil {
		t.Fatalf("ListDetail: %v", err)
	}
	all, err := nodes.ExtractNodes(pages)
	if err != nil || len(all) != 1 {
		t.Fatalf("ListDetail: %d nodes, %v", len(all), err)
	}
	if err := nodes.Delete(ctx, c, n.UUID).ExtractErr(); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := nodes.Get(ctx, c, n.UUID).Extract(); err == nil {
		t.Error("Get after Delete succeeded")
	}
}
