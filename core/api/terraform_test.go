package api_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/apiversions"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/allocations"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// TestTerraformProviderCalls drives Rivet the way the Terraform ironic
// provider (metal3-community/terraform-provider-ironic) does: gophercloud v2
// with the microversion pinned to its default 1.99 and never negotiated, the
// provider's health check (GET / must list v1 as CURRENT), then its
// resources' calls — ironic_node_v1 (create with a namespaced name and
// interfaces, update, manage/provide), ironic_port_v1 and
// ironic_portgroup_v1, ironic_allocation_v1, ironic_deployment (instance_info
// and the active target, then deleted) — against the advertised maximum,
// with no raised test maximum.
func TestTerraformProviderCalls(t *testing.T) {
	h := newStackWith(t, release.NewPinner(release.Default(), release.Pin{}),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: srv.URL + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	c.Microversion = "1.99" // the provider's default; it does not negotiate
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// healthCheck: GET / through the provider's client.
	root, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := apiversions.List(ctx, root).Extract()
	if err != nil || len(vs.Versions) == 0 {
		t.Fatalf("apiversions.List: %+v, %v", vs, err)
	}
	for _, v := range vs.Versions {
		if v.ID == "v1" && v.Status != "CURRENT" {
			t.Fatalf("v1 is %q, the provider's health check wants CURRENT", v.Status)
		}
	}

	wait := func(id, state string) *nodes.Node {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			n, err := nodes.Get(ctx, c, id).Extract()
			if err != nil {
				t.Fatalf("nodes.Get: %v", err)
			}
			if n.ProvisionState == state && n.TargetProvisionState == "" {
				return n
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s: %s (target %q, last_error %q), want %s", id, n.ProvisionState, n.TargetProvisionState, n.LastError, state)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	move := func(id string, target nodes.TargetProvisionState, state string) {
		t.Helper()
		if err := nodes.ChangeProvisionState(ctx, c, id, nodes.ProvisionStateOpts{Target: target}).ExtractErr(); err != nil {
			t.Fatalf("ChangeProvisionState %s: %v", target, err)
		}
		wait(id, state)
	}

	// ironic_node_v1.
	n, err := nodes.Create(ctx, c, nodes.CreateOpts{Driver: "fake-hardware", Name: "tenant~tf-1",
		DeployInterface: "fake", ResourceClass: "baremetal",
		Properties: map[string]any{"cpu_arch": "x86_64", "memory_mb": 4096}}).Extract()
	if err != nil {
		t.Fatalf("nodes.Create: %v", err)
	}
	if n.Name != "tenant~tf-1" || n.DeployInterface != "fake" {
		t.Fatalf("created %+v", n)
	}
	if _, err := nodes.Update(ctx, c, n.UUID, nodes.UpdateOpts{
		nodes.UpdateOperation{Op: nodes.AddOp, Path: "/extra/managed_by", Value: "terraform"},
		nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/owner", Value: "tenant"},
	}).Extract(); err != nil {
		t.Fatalf("nodes.Update: %v", err)
	}

	// ironic_port_v1 and ironic_portgroup_v1.
	// The provider's gophercloud has a portgroups package that the v2.15
	// this module uses lacks: the same POST through its service client.
	var pg struct {
		UUID string `json:"uuid"`
	}
	if _, err := c.Post(ctx, c.ServiceURL("portgroups"), map[string]any{"node_uuid": n.UUID, "name": "tf-bond",
		"address": "52:54:00:aa:00:10", "mode": "active-backup"}, &pg, &gophercloud.RequestOpts{OkCodes: []int{201}}); err != nil || pg.UUID == "" {
		t.Fatalf("portgroup create: %v", err)
	}
	pxe := true
	p, err := ports.Create(ctx, c, ports.CreateOpts{NodeUUID: n.UUID, Address: "52:54:00:aa:00:11",
		PortGroupUUID: pg.UUID, PXEEnabled: &pxe}).Extract()
	if err != nil {
		t.Fatalf("ports.Create: %v", err)
	}
	if _, err := ports.Update(ctx, c, p.UUID, ports.UpdateOpts{
		ports.UpdateOperation{Op: ports.AddOp, Path: "/extra/rack", Value: "r1"},
	}).Extract(); err != nil {
		t.Fatalf("ports.Update: %v", err)
	}

	move(n.UUID, nodes.TargetManage, "manageable")
	move(n.UUID, nodes.TargetProvide, "available")

	// ironic_allocation_v1.
	a, err := allocations.Create(ctx, c, allocations.CreateOpts{ResourceClass: "baremetal", Name: "tf-alloc",
		CandidateNodes: []string{n.UUID}}).Extract()
	if err != nil {
		t.Fatalf("allocations.Create: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for a.State == "allocating" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		if a, err = allocations.Get(ctx, c, a.UUID).Extract(); err != nil {
			t.Fatalf("allocations.Get: %v", err)
		}
	}
	if a.State != "active" || a.NodeUUID != n.UUID {
		t.Fatalf("allocation %+v", a)
	}
	if err := allocations.Delete(ctx, c, a.UUID).ExtractErr(); err != nil {
		t.Fatalf("allocations.Delete: %v", err)
	}

	// ironic_deployment: instance_info, then active; destroyed: deleted.
	if _, err := nodes.Update(ctx, c, n.UUID, nodes.UpdateOpts{
		nodes.UpdateOperation{Op: nodes.AddOp, Path: "/instance_info/image_source", Value: "http://images.example/os.qcow2"},
		nodes.UpdateOperation{Op: nodes.AddOp, Path: "/instance_info/image_checksum", Value: "0123456789abcdef0123456789abcdef"},
	}).Extract(); err != nil {
		t.Fatalf("nodes.Update instance_info: %v", err)
	}
	if err := nodes.ChangeProvisionState(ctx, c, n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetActive,
		ConfigDrive: nodes.ConfigDrive{MetaData: map[string]any{"uuid": n.UUID}}}).ExtractErr(); err != nil {
		t.Fatalf("deploy: %v", err)
	}
	if got := wait(n.UUID, "active"); got.PowerState != "power on" {
		t.Errorf("deployed node power %q", got.PowerState)
	}
	move(n.UUID, nodes.TargetDeleted, "available")

	// Destroy: the port, the portgroup, the node.
	for _, err := range []error{
		ports.Delete(ctx, c, p.UUID).ExtractErr(),
		func() error {
			_, err := c.Delete(ctx, c.ServiceURL("portgroups", pg.UUID), nil)
			return err
		}(),
		nodes.Delete(ctx, c, n.UUID).ExtractErr(),
	} {
		if err != nil {
			t.Fatalf("delete: %v", err)
		}
	}
	if _, err := nodes.Get(ctx, c, n.UUID).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("deleted node: %v, want 404", err)
	}
}
