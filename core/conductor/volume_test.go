package conductor

import (
	"context"
	"errors"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/version"
)

// TestVolumeHandlers: update_volume_* and destroy_volume_* (RPC 1.5) save
// and delete under the node's lease with Ironic's state rules and 409s; a
// client capped at 1.4 (release 0.2) refuses them before sending.
func TestVolumeHandlers(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.enroll("node-1")
	create := func(obj objects.Object) {
		t.Helper()
		if err := h.store.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	vc := &objects.VolumeConnector{UUID: "40000000-0000-0000-0000-000000000001", NodeID: n.ID, Type: "iqn", ConnectorID: "iqn.a"}
	other := &objects.VolumeConnector{UUID: "40000000-0000-0000-0000-000000000002", NodeID: n.ID, Type: "iqn", ConnectorID: "iqn.b"}
	vt := &objects.VolumeTarget{UUID: "50000000-0000-0000-0000-000000000001", NodeID: n.ID, VolumeType: "iscsi", VolumeID: "v"}
	vt2 := &objects.VolumeTarget{UUID: "50000000-0000-0000-0000-000000000002", NodeID: n.ID, VolumeType: "iscsi", VolumeID: "w", BootIndex: 1}
	for _, o := range []objects.Object{vc, other, vt, vt2} {
		create(o)
	}
	class := func(err error) string {
		var c rpc.Classed
		if errors.As(err, &c) {
			return c.ErrorClass()
		}
		return ""
	}
	vc.ConnectorID = "iqn.c"
	if _, err := h.api.UpdateVolumeConnector(ctx, n, vc); class(err) != "InvalidStateRequested" {
		t.Fatalf("update with the power unknown: %v", err)
	}
	n = h.node(n.UUID)
	off := "power off"
	n.PowerState = &off
	if err := h.store.Save(ctx, n); err != nil {
		t.Fatal(err)
	}
	out, err := h.api.UpdateVolumeConnector(ctx, n, vc)
	if err != nil || out.ConnectorID != "iqn.c" {
		t.Fatalf("update_volume_connector = %+v, %v", out, err)
	}
	other.ConnectorID = "iqn.c"
	if _, err := h.api.UpdateVolumeConnector(ctx, n, other); class(err) != "VolumeConnectorTypeAndIdAlreadyExists" {
		t.Errorf("update to a duplicate: %v", err)
	}
	vt.BootIndex = 1
	if _, err := h.api.UpdateVolumeTarget(ctx, n, vt); class(err) != "VolumeTargetBootIndexAlreadyExists" {
		t.Errorf("update to a used boot index: %v", err)
	}
	vt.BootIndex = 7
	if got, err := h.api.UpdateVolumeTarget(ctx, n, vt); err != nil || got.BootIndex != 7 {
		t.Errorf("update_volume_target = %+v, %v", got, err)
	}
	if err := h.api.DestroyVolumeConnector(ctx, n, vc); err != nil {
		t.Errorf("destroy_volume_connector: %v", err)
	}
	if err := h.api.DestroyVolumeTarget(ctx, n, vt); err != nil {
		t.Errorf("destroy_volume_target: %v", err)
	}
	if err := h.api.DestroyVolumeTarget(ctx, n, vt); class(err) != "VolumeTargetNotFound" {
		t.Errorf("destroy twice: %v", err)
	}

	capped := rpc.ConductorAPI{Client: rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return version.MustParse("1.4") },
		rpc.ObjectCodecFor(h.store.Registry(), nil), rpc.LocalTransport{Server: h.svc.RPCServer()}), Router: h.api.Router}
	for name, call := range map[string]func() error{
		"update_volume_connector":  func() error { _, err := capped.UpdateVolumeConnector(ctx, n, other); return err },
		"destroy_volume_connector": func() error { return capped.DestroyVolumeConnector(ctx, n, other) },
		"update_volume_target":     func() error { _, err := capped.UpdateVolumeTarget(ctx, n, vt2); return err },
		"destroy_volume_target":    func() error { return capped.DestroyVolumeTarget(ctx, n, vt2) },
	} {
		var ce *rpc.CapError
		if err := call(); !errors.As(err, &ce) {
			t.Errorf("%s capped at 1.4: %v, want a CapError", name, err)
		}
	}
}
