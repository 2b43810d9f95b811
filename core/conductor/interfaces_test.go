package conductor

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/catalog"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/drivers/fake"
)

func interfacesOf(n *objects.Node) map[string]string {
	out := map[string]string{}
	for _, iface := range []string{"boot", "console", "deploy", "inspect", "management", "network", "power", "raid", "vendor"} {
		if p := *n.InterfaceField(iface); p != nil {
			out[iface] = *p
		}
	}
	return out
}

// create_node fills the interfaces a node names none for with its hardware
// type's defaults and refuses implementations the conductor does not
// enable for it, with Ironic's classes and messages.
func TestCreateNodeInterfaces(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil, "ipmi")
	ctx := context.Background()
	n := h.enroll("node-1")
	want := map[string]string{"boot": "fake", "console": "no-console", "deploy": "fake", "inspect": "fake",
		"management": "fake", "network": "noop", "power": "fake", "raid": "no-raid", "vendor": "no-vendor"}
	if diff := cmp.Diff(want, interfacesOf(h.node(n.UUID))); diff != "" {
		t.Fatalf("stored defaults (-want +got):\n%s", diff)
	}

	off := "no-inspect"
	n2, err := h.api.CreateNode(ctx, &objects.Node{Driver: fake.HardwareType, InspectInterface: &off})
	if err != nil || deref(h.node(n2.UUID).InspectInterface) != "no-inspect" {
		t.Fatalf("create with inspect_interface no-inspect: %v", err)
	}

	tests := map[string]struct {
		node  *objects.Node
		class string
		msg   string
	}{
		"unknown implementation": {
			node:  &objects.Node{Driver: fake.HardwareType, DeployInterface: ptr("iscsi")},
			class: "InterfaceNotFoundInEntrypoint",
			msg:   "Could not find the following interface in the 'ironic.hardware.interfaces.deploy' entrypoint: iscsi. Valid interfaces are ['direct', 'fake', 'ramdisk'].",
		},
		"another hardware type's": {
			node:  &objects.Node{Driver: fake.HardwareType, PowerInterface: ptr("ipmitool")},
			class: "IncompatibleInterface",
			msg:   "power interface implementation 'ipmitool' is not supported by hardware type fake-hardware.",
		},
		"network too": {
			node:  &objects.Node{Driver: "ipmi", NetworkInterface: ptr("neutron")},
			class: "InterfaceNotFoundInEntrypoint",
			msg:   "Could not find the following interface in the 'ironic.hardware.interfaces.network' entrypoint: neutron. Valid interfaces are ['noop'].",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := h.api.CreateNode(ctx, tc.node)
			class, code := classOf(err)
			if class != tc.class || code != http.StatusBadRequest || err.Error() != tc.msg {
				t.Fatalf("got %v (%s %d), want %s 400 %q", err, class, code, tc.class, tc.msg)
			}
		})
	}
}

// update_node re-checks interfaces when one or the driver changes, refuses
// changing them outside the states Ironic allows (unless in maintenance),
// and the conductor acts on the choice: no-inspect turns inspection off.
func TestUpdateNodeInterfaces(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil, "ipmi")
	ctx := context.Background()
	n := h.available("node-1")
	n.InspectInterface = ptr("no-inspect")
	if _, err := h.api.UpdateNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	if err := h.api.DoProvisioningAction(ctx, n, "manage"); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "manageable")
	err := h.api.InspectHardware(ctx, h.node(n.UUID))
	if class, code := classOf(err); class != "UnsupportedDriverExtension" || code != http.StatusBadRequest ||
		err.Error() != "Driver fake-hardware does not support inspect (disabled or not implemented)." {
		t.Fatalf("inspect with no-inspect: %v (%s %d)", err, class, code)
	}
	res, err := h.api.ValidateDriverInterfaces(ctx, h.node(n.UUID))
	if err != nil || res["inspect"].Result || deref(res["inspect"].Reason) != "not supported" || !res["power"].Result {
		t.Fatalf("validate: %+v, %v", res, err)
	}

	// Changing the driver keeps the named implementations: fake-hardware's
	// are not ipmi's.
	cur := h.node(n.UUID)
	cur.Driver = "ipmi"
	_, err = h.api.UpdateNode(ctx, cur)
	if class, _ := classOf(err); class != "IncompatibleInterface" {
		t.Fatalf("driver change keeping fake interfaces: %v", err)
	}

	// Interfaces change only in enroll, inspecting, inspect wait,
	// manageable, available, or in maintenance.
	active := h.node(n.UUID)
	active.ProvisionState = "active"
	if err := h.store.Save(ctx, active); err != nil {
		t.Fatal(err)
	}
	active = h.node(n.UUID)
	active.InspectInterface = ptr("fake")
	_, err = h.api.UpdateNode(ctx, active)
	want := "Node " + n.UUID + " can not have inspect_interface updated unless it is in one of allowed (enroll, inspecting, inspect wait, manageable, available) states or in maintenance mode. Current state is 'active'."
	if class, code := classOf(err); class != "InvalidState" || code != http.StatusConflict || err.Error() != want {
		t.Fatalf("interface change while active: %v (%s %d)", err, class, code)
	}
	active.Maintenance = true
	if _, err := h.api.UpdateNode(ctx, active); err != nil {
		t.Fatalf("interface change in maintenance: %v", err)
	}
	if got := deref(h.node(n.UUID).InspectInterface); got != "fake" {
		t.Fatalf("inspect_interface = %q after the update", got)
	}
}

// An API pinned to 0.1 sends Node 1.0, which lacks the interface fields:
// its update of an active node neither resets the node's choices nor is
// refused for changing them.
func TestUpdateFromPinnedSenderKeepsInterfaces(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	off := "no-inspect"
	n, err := h.api.CreateNode(ctx, &objects.Node{Driver: fake.HardwareType, InspectInterface: &off})
	if err != nil {
		t.Fatal(err)
	}
	row := h.node(n.UUID)
	row.ProvisionState = "active"
	if err := h.store.Save(ctx, row); err != nil {
		t.Fatal(err)
	}

	tb := dbtest.Releases(t)
	pin, err := tb.ParsePin("0.1")
	if err != nil {
		t.Fatal(err)
	}
	pinner := release.NewPinner(tb, pin)
	client := rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return pinner.Effective().RPC },
		rpc.ObjectCodecFor(h.store.Registry(), pinner), rpc.LocalTransport{Server: h.svc.RPCServer()})
	old := rpc.ConductorAPI{Client: client, Router: rpc.NewRouter(h.svc.listConductors, 5, time.Hour)}

	upd := h.node(n.UUID)
	upd.Extra = map[string]any{"rack": "r7"}
	if _, err := old.UpdateNode(ctx, upd); err != nil {
		t.Fatalf("update from a 0.1-pinned API: %v", err)
	}
	got := h.node(n.UUID)
	if got.Extra["rack"] != "r7" || deref(got.InspectInterface) != "no-inspect" || deref(got.DeployInterface) != "fake" {
		t.Fatalf("after the pinned update: extra %v, inspect %v, deploy %v", got.Extra, deref(got.InspectInterface), deref(got.DeployInterface))
	}
}

// A node a 0.1-pinned service wrote (Node 1.0, no interfaces) and an
// unpinned API then reads converts to 1.1 with its interface fields marked
// changed; an update of another field through it is no interface change,
// so an active node takes it.
func TestUpdateOfAnOldRowIsNoInterfaceChange(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	tb := dbtest.Releases(t)
	pin, err := tb.ParsePin("0.1")
	if err != nil {
		t.Fatal(err)
	}
	old := db.NewStore(h.dbh, h.store.Registry(), release.NewPinner(tb, pin))
	n := &objects.Node{UUID: "7be26c0b-03f2-4d2e-ae87-c02d7f33c123", Driver: fake.HardwareType, ProvisionState: "active",
		Extra: map[string]any{}}
	if err := old.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	loaded := h.node(n.UUID) // through the unpinned store: converted, fields marked
	loaded.Extra = map[string]any{"rack": "r2"}
	if _, err := h.api.UpdateNode(ctx, loaded); err != nil {
		t.Fatalf("update of an active node written at 1.0: %v", err)
	}
	if got := h.node(n.UUID); got.Extra["rack"] != "r2" {
		t.Fatalf("extra = %v", got.Extra)
	}
}

// TestCatalogCache: the catalog is rebuilt when what the plugins negotiated
// or the conductor's options change, and shared while they do not.
func TestCatalogCache(t *testing.T) {
	var c catalogCache
	served := func(ifaces ...string) []catalog.Served {
		return []catalog.Served{{HardwareType: "fake-hardware", Interfaces: ifaces}}
	}
	a := c.get(served("power", "management"), catalog.Options{})
	if b := c.get(served("power", "management"), catalog.Options{}); b != a {
		t.Fatal("the same negotiation built a new catalog")
	}
	b := c.get(served("power", "management", "deploy"), catalog.Options{})
	if b == a || !slices.Contains(b.Impls("fake-hardware", catalog.Deploy).Enabled, b.Impls("fake-hardware", catalog.Deploy).Default) {
		t.Fatalf("a plugin that now negotiates deploy did not show: %+v", b.Impls("fake-hardware", catalog.Deploy))
	}
	if len(a.Impls("fake-hardware", catalog.Deploy).Enabled) != 0 {
		t.Fatal("the earlier catalog changed")
	}
	if d := c.get(served("power", "management", "deploy"), catalog.Options{BootServer: true}); d == b {
		t.Fatal("a different boot server option reused the catalog")
	}
	if e := c.get(nil, catalog.Options{BootServer: true}); e.Has("fake-hardware") {
		t.Fatal("a plugin gone still shows")
	}
}
