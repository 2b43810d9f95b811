package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/allocations"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/conductors"
)

// TestGophercloudAllocationsAndConductors drives gophercloud v2's
// allocation and conductor calls against the API over a real conductor.
func TestGophercloudAllocationsAndConductors(t *testing.T) {
	s := newAllocStack(t)
	node := s.available("gc-1", "gold")
	c, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: s.url + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	c.Microversion = "1.52"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	a, err := allocations.Create(ctx, c, allocations.CreateOpts{ResourceClass: "gold", Name: "gc-alloc",
		CandidateNodes: []string{"gc-1"}, Extra: map[string]string{"k": "v"}}).Extract()
	if err != nil {
		t.Fatalf("allocations.Create: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for a.State == "allocating" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		if a, err = allocations.Get(ctx, c, a.UUID).Extract(); err != nil {
			t.Fatalf("allocations.Get: %v", err)
		}
	}
	if a.State != "active" || a.NodeUUID != node || a.Extra["k"] != "v" || len(a.CandidateNodes) != 1 {
		t.Fatalf("allocation = %+v", a)
	}
	pages, err := allocations.List(c, allocations.ListOpts{Node: "gc-1", State: "active"}).AllPages(ctx)
	if err != nil {
		t.Fatalf("allocations.List: %v", err)
	}
	list, err := allocations.ExtractAllocations(pages)
	if err != nil || len(list) != 1 || list[0].UUID != a.UUID {
		t.Fatalf("listed %+v, %v", list, err)
	}
	if err := allocations.Delete(ctx, c, a.UUID).ExtractErr(); err != nil {
		t.Fatalf("allocations.Delete: %v", err)
	}
	if _, err := allocations.Get(ctx, c, a.UUID).Extract(); err == nil {
		t.Error("deleted allocation still found")
	}

	c.Microversion = "1.49"
	cpages, err := conductors.List(c, conductors.ListOpts{Detail: true}).AllPages(ctx)
	if err != nil {
		t.Fatalf("conductors.List: %v", err)
	}
	cs, err := conductors.ExtractConductors(cpages)
	if err != nil || len(cs) != 1 || cs[0].Hostname != "cond-1" || !cs[0].Alive || len(cs[0].Drivers) == 0 || cs[0].CreatedAt.IsZero() {
		t.Fatalf("conductors = %+v, %v", cs, err)
	}
	one, err := conductors.Get(ctx, c, "cond-1").Extract()
	if err != nil || one.Hostname != "cond-1" || !one.Alive {
		t.Fatalf("conductors.Get = %+v, %v", one, err)
	}
}
