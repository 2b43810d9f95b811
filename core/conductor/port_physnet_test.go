package conductor

import (
	"context"
	"errors"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
)

// TestPortPhysnetConsistency: a port joins a portgroup only on the
// physical network of its other ports, or of the portgroup when it has
// none (Ironic's validate_port_physnet, 409); a portgroup's new physical
// network is set on its ports.
func TestPortPhysnetConsistency(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.enroll("node-1")
	str := func(s string) *string { return &s }
	pg := &objects.Portgroup{UUID: "60000000-0000-0000-0000-000000000001", NodeID: n.ID, StandalonePortsSupported: true}
	if err := h.store.Create(ctx, pg); err != nil {
		t.Fatal(err)
	}
	conflict := func(err error) bool {
		var c rpc.Classed
		return errors.As(err, &c) && c.ErrorClass() == "Conflict"
	}
	p1, err := h.api.CreatePort(ctx, n, &objects.Port{Address: "52:54:00:00:0c:01", NodeID: n.ID, PortgroupID: &pg.ID,
		PXEEnabled: true, PhysicalNetwork: str("physnet1")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.api.CreatePort(ctx, n, &objects.Port{Address: "52:54:00:00:0c:02", NodeID: n.ID, PortgroupID: &pg.ID,
		PXEEnabled: true, PhysicalNetwork: str("physnet2")})
	if !conflict(err) || err.Error() != "Port with physical network physnet2 cannot become a member of port group "+pg.UUID+" which has ports in physical network physnet1." {
		t.Errorf("a port on another physical network: %v", err)
	}
	p2, err := h.api.CreatePort(ctx, n, &objects.Port{Address: "52:54:00:00:0c:03", NodeID: n.ID, PXEEnabled: true})
	if err != nil {
		t.Fatal(err)
	}
	p2.PortgroupID = &pg.ID
	if _, err := h.api.UpdatePort(ctx, n, p2); !conflict(err) || err.Error() != "Port with physical network None cannot become a member of port group "+pg.UUID+" which has ports in physical network physnet1." {
		t.Errorf("joining without a physical network: %v", err)
	}
	p2.PhysicalNetwork = str("physnet1")
	if _, err := h.api.UpdatePort(ctx, n, p2); err != nil {
		t.Errorf("joining on the same physical network: %v", err)
	}
	pg.PhysicalNetwork = str("physnet3")
	if _, err := h.api.UpdatePortgroup(ctx, n, pg); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{p1.UUID, p2.UUID} {
		obj, err := h.svc.loadChild(ctx, "Port", u)
		if err != nil {
			t.Fatal(err)
		}
		if got := obj.(*objects.Port).PhysicalNetwork; got == nil || *got != "physnet3" {
			t.Errorf("port %s physical network after the portgroup's change: %v", u, got)
		}
	}
}
