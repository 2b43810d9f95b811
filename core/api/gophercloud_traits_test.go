package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// TestGophercloudNodeTraits: gophercloud v2 has no traits or deploy
// template calls, but reads a node's traits (Node.Traits) from GET and
// from lists with ?fields=…,traits, as Metal3 and Nova-style readers do;
// the traits are set over plain HTTP first.
func TestGophercloudNodeTraits(t *testing.T) {
	srv := httptest.NewServer(newStackWith(t, release.NewPinner(release.Default(), release.Pin{}),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)}, api.RaiseMaxAPI("1.37")))
	defer srv.Close()
	c, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: srv.URL + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	c.Microversion = "1.37"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := nodes.Create(ctx, c, nodes.CreateOpts{Name: "gt1", Driver: "fake-hardware"}).Extract()
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	req, _ := http.NewRequest("PUT", srv.URL+"/v1/nodes/gt1/traits", strings.NewReader(`{"traits":["CUSTOM_GPU","HW_CPU_X86_AVX2"]}`))
	req.Header.Set(api.HeaderVersion, "1.37")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("PUT traits: %v %v", resp, err)
	}
	resp.Body.Close()
	want := []string{"CUSTOM_GPU", "HW_CPU_X86_AVX2"}
	got, err := nodes.Get(ctx, c, n.UUID).Extract()
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if d := cmp.Diff(want, got.Traits); d != "" {
		t.Errorf("Get traits (-want +got):\n%s", d)
	}
	pages, err := nodes.List(c, nodes.ListOpts{Fields: []string{"uuid", "power_state", "properties", "traits", "resource_class"}}).AllPages(ctx)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	list, err := nodes.ExtractNodes(pages)
	if err != nil || len(list) != 1 {
		t.Fatalf("ExtractNodes: %v, %v", list, err)
	}
	if d := cmp.Diff(want, list[0].Traits); d != "" {
		t.Errorf("List traits (-want +got):\n%s", d)
	}
}
