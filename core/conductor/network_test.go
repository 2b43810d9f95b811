package conductor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// TestFreePortChoice checks Ironic's choice of where a VIF goes: portgroups
// with ports first, then PXE-enabled ports, each in creation order; ports
// of a portgroup only once one of its ports carries a VIF.
func TestFreePortChoice(t *testing.T) {
	port := func(uuid string, pxe bool, group int64, vif string) portLike {
		p := &objects.Port{UUID: uuid, PXEEnabled: pxe, InternalInfo: map[string]any{}, Extra: map[string]any{}}
		if group != 0 {
			p.PortgroupID = &group
		}
		if vif != "" {
			p.InternalInfo[tenantVIFKey] = vif
		}
		return portLike{obj: p, uuid: uuid, pxe: pxe, info: &p.InternalInfo, extra: &p.Extra}
	}
	group := func(uuid string, vif string) portLike {
		pg := &objects.Portgroup{UUID: uuid, InternalInfo: map[string]any{}, Extra: map[string]any{}}
		if vif != "" {
			pg.InternalInfo[tenantVIFKey] = vif
		}
		return portLike{obj: pg, uuid: uuid, group: true, pxe: true, info: &pg.InternalInfo, extra: &pg.Extra}
	}
	build := func(ports []portLike, groups ...portLike) *nodePorts {
		np := &nodePorts{ports: ports, groups: groups, groupOf: map[string]int64{}, groupID: map[string]int64{}}
		for i, g := range groups {
			np.groupID[g.uuid] = int64(i + 1)
		}
		for _, p := range ports {
			if id := p.obj.(*objects.Port).PortgroupID; id != nil {
				np.groupOf[p.uuid] = *id
			}
		}
		return np
	}
	tests := map[string]struct {
		np        *nodePorts
		ask       vifWant // vif_info's port_uuid / portgroup_uuid (1.67)
		want      string  // chosen uuid
		wantClass string  // or the error class
	}{
		"no ports": {np: build(nil), wantClass: "NoFreePhysicalPorts"},
		"PXE-enabled port first": {
			np: build([]portLike{port("p1", false, 0, ""), port("p2", true, 0, ""), port("p3", true, 0, "")}), want: "p2"},
		"creation order among equals": {np: build([]portLike{port("p1", false, 0, ""), port("p2", false, 0, "")}), want: "p1"},
		"busy ports skipped": {
			np: build([]portLike{port("p1", true, 0, "vif-a"), port("p2", false, 0, "")}), want: "p2"},
		"all busy": {np: build([]portLike{port("p1", true, 0, "vif-a")}), wantClass: "NoFreePhysicalPorts"},
		"portgroup before ports": {
			np: build([]portLike{port("p1", true, 0, ""), port("g1a", false, 1, "")}, group("g1", "")), want: "g1"},
		"empty portgroup ignored": {np: build([]portLike{port("p1", false, 0, "")}, group("g1", "")), want: "p1"},
		"attached portgroup's ports are not free": {
			np: build([]portLike{port("g1a", true, 1, ""), port("g1b", true, 1, "")}, group("g1", "vif-a")), wantClass: "NoFreePhysicalPorts"},
		"a portgroup with a busy port offers its other ports": {
			np: build([]portLike{port("g1a", true, 1, "vif-a"), port("g1b", false, 1, ""), port("g1c", true, 1, "")}, group("g1", "")), want: "g1c"},
		"already on a port": {
			np: build([]portLike{port("p1", true, 0, "vif-x"), port("p2", true, 0, "")}), wantClass: "VifAlreadyAttached"},
		"already on a portgroup": {
			np: build([]portLike{port("g1a", true, 1, "")}, group("g1", "vif-x")), wantClass: "VifAlreadyAttached"},
		"port_uuid picks that port": {
			np:  build([]portLike{port("p1", true, 0, ""), port("p2", false, 0, ""), port("g1a", false, 1, "")}, group("g1", "")),
			ask: vifWant{port: "p2"}, want: "p2"},
		"port_uuid of a busy port": {
			np: build([]portLike{port("p1", true, 0, "vif-a"), port("p2", true, 0, "")}), ask: vifWant{port: "p1"}, wantClass: "NoFreePhysicalPorts"},
		"port_uuid of a port in a portgroup": {
			np: build([]portLike{port("g1a", true, 1, "")}, group("g1", "")), ask: vifWant{port: "g1a"}, wantClass: "NoFreePhysicalPorts"},
		"portgroup_uuid picks that portgroup": {
			np:  build([]portLike{port("p1", true, 0, ""), port("g1a", false, 1, ""), port("g2a", false, 2, "")}, group("g1", ""), group("g2", "")),
			ask: vifWant{group: "g2"}, want: "g2"},
		"portgroup_uuid never picks a loose port": {
			np: build([]portLike{port("p1", true, 0, "")}, group("g1", "")), ask: vifWant{group: "g1"}, wantClass: "NoFreePhysicalPorts"},
		"portgroup_uuid of a portgroup with busy ports": {
			np: build([]portLike{port("g1a", true, 1, "vif-a"), port("g1b", true, 1, "")}, group("g1", "")), ask: vifWant{group: "g1"}, wantClass: "NoFreePhysicalPorts"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := tc.np.freeFor("vif-x", tc.ask)
			if tc.wantClass != "" {
				if class, _ := classOf(err); class != tc.wantClass {
					t.Fatalf("err = %v (%s), want %s", err, class, tc.wantClass)
				}
				return
			}
			if err != nil || got.uuid != tc.want {
				t.Fatalf("chose %q, %v; want %q", got.uuid, err, tc.want)
			}
		})
	}
}

// TestVIFsThroughRPC attaches, lists and detaches VIFs through the RPC
// client: they land in the ports' and portgroups' internal_info, errors
// are Ironic's classes, and changes take the node's lease.
func TestVIFsThroughRPC(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.node(h.enroll("node-1").UUID)
	list := func() []rpc.VIF {
		t.Helper()
		vifs, err := h.api.VIFList(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		return vifs
	}
	if got := list(); len(got) != 0 {
		t.Fatalf("new node lists %v", got)
	}
	err := h.api.VIFAttach(ctx, n, map[string]any{"id": "vif-0"})
	if class, code := classOf(err); class != "NoFreePhysicalPorts" || code != http.StatusBadRequest ||
		err.Error() != "Unable to attach VIF vif-0, not enough free physical ports." {
		t.Fatalf("attach without ports: %v (%s %d)", err, class, code)
	}
	pg := &objects.Portgroup{UUID: "40000000-0000-0000-0000-000000000001", NodeID: n.ID, StandalonePortsSupported: true,
		Extra: map[string]any{}, InternalInfo: map[string]any{}, Properties: map[string]any{}}
	if err := h.store.Create(ctx, pg); err != nil {
		t.Fatal(err)
	}
	member, err := h.api.CreatePort(ctx, n, &objects.Port{Address: "52:54:00:00:01:01", NodeID: n.ID, PortgroupID: &pg.ID, PXEEnabled: true})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := h.api.CreatePort(ctx, n, &objects.Port{Address: "52:54:00:00:01:02", NodeID: n.ID, PXEEnabled: false})
	if err != nil {
		t.Fatal(err)
	}
	pxe, err := h.api.CreatePort(ctx, n, &objects.Port{Address: "52:54:00:00:01:03", NodeID: n.ID, PXEEnabled: true})
	if err != nil {
		t.Fatal(err)
	}
	// The portgroup, then the PXE-enabled port, then the other port.
	for i, want := range []string{pg.UUID, pxe.UUID, plain.UUID} {
		vif := fmt.Sprintf("vif-%d", i+1)
		if err := h.api.VIFAttach(ctx, n, map[string]any{"id": vif, "tag": "ignored"}); err != nil {
			t.Fatalf("attach %s: %v", vif, err)
		}
		if got := h.vifHolder(n, vif); got != want {
			t.Errorf("%s went to %s, want %s", vif, got, want)
		}
	}
	if d := cmp.Diff([]rpc.VIF{{ID: "vif-3"}, {ID: "vif-2"}, {ID: "vif-1"}}, list()); d != "" {
		t.Errorf("vif_list (ports in creation order, then portgroups, as Ironic) (-want +got):\n%s", d)
	}
	err = h.api.VIFAttach(ctx, n, map[string]any{"id": "vif-4"})
	if class, _ := classOf(err); class != "NoFreePhysicalPorts" {
		t.Errorf("the portgroup's member is not free while the portgroup is attached: %v", err)
	}
	err = h.api.VIFAttach(ctx, n, map[string]any{"id": "vif-2"})
	want := "Unable to attach VIF because VIF vif-2 is already attached to Ironic Port " + pxe.UUID
	if class, code := classOf(err); class != "VifAlreadyAttached" || code != http.StatusConflict || err.Error() != want {
		t.Errorf("attach twice: %v (%s %d)", err, class, code)
	}

	// A port bound to a VIF is not deleted unless the node is in maintenance.
	err = h.api.DestroyPort(ctx, n, pxe)
	if class, code := classOf(err); class != "InvalidState" || code != http.StatusConflict ||
		err.Error() != "Cannot delete the port "+pxe.UUID+" as it is bound to VIF vif-2 for use." {
		t.Errorf("destroy a bound port: %v (%s %d)", err, class, code)
	}

	// Detach clears internal_info and the legacy extra key.
	stored := h.port(pxe.UUID)
	stored.Extra = map[string]any{"vif_port_id": "vif-2", "keep": "me"}
	if err := h.store.Save(ctx, stored); err != nil {
		t.Fatal(err)
	}
	err = h.api.VIFDetach(ctx, n, "vif-9")
	if class, code := classOf(err); class != "VifNotAttached" || code != http.StatusBadRequest ||
		err.Error() != "Unable to detach VIF vif-9 from node "+n.UUID+" because it is not attached to it." {
		t.Errorf("detach unknown: %v (%s %d)", err, class, code)
	}
	if err := h.api.VIFDetach(ctx, n, "vif-2"); err != nil {
		t.Fatal(err)
	}
	got := h.port(pxe.UUID)
	if _, ok := got.InternalInfo[tenantVIFKey]; ok || got.Extra["vif_port_id"] != nil || got.Extra["keep"] != "me" {
		t.Errorf("after detach: internal_info %v, extra %v", got.InternalInfo, got.Extra)
	}
	if err := h.api.DestroyPort(ctx, n, pxe); err != nil {
		t.Errorf("destroy a port whose VIF was detached: %v", err)
	}
	if d := cmp.Diff([]rpc.VIF{{ID: "vif-3"}, {ID: "vif-1"}}, list()); d != "" {
		t.Errorf("after detach (-want +got):\n%s", d)
	}
	// Once the portgroup is free again, it is chosen before the free port.
	if err := h.api.VIFDetach(ctx, n, "vif-1"); err != nil {
		t.Fatal(err)
	}
	if err := h.api.VIFAttach(ctx, n, map[string]any{"id": "vif-5"}); err != nil {
		t.Fatal(err)
	}
	if got := h.vifHolder(n, "vif-5"); got != pg.UUID {
		t.Errorf("vif-5 went to %s, want the portgroup %s (not its member %s)", got, pg.UUID, member.UUID)
	}
	if got := h.node(n.UUID); got.Reservation != nil {
		t.Errorf("lease left behind: %v", *got.Reservation)
	}
}

// TestVIFsNeedTheLease: with another conductor holding the node, attach
// and detach answer NodeLocked and change nothing; list still reads.
func TestVIFsNeedTheLease(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.node(h.enroll("node-1").UUID)
	if _, err := h.api.CreatePort(ctx, n, &objects.Port{Address: "52:54:00:00:02:01", NodeID: n.ID, PXEEnabled: true}); err != nil {
		t.Fatal(err)
	}
	if err := h.api.VIFAttach(ctx, n, map[string]any{"id": "vif-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.dbh.AcquireLease(ctx, n.UUID, "cond-other", time.Minute); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"attach": func() error { return h.api.VIFAttach(ctx, n, map[string]any{"id": "vif-2"}) },
		"detach": func() error { return h.api.VIFDetach(ctx, n, "vif-1") },
	} {
		if class, code := classOf(call()); class != "NodeLocked" || code != http.StatusConflict {
			t.Errorf("%s on a locked node: %s %d", name, class, code)
		}
	}
	vifs, err := h.api.VIFList(ctx, n)
	if err != nil || len(vifs) != 1 || vifs[0].ID != "vif-1" {
		t.Errorf("list on a locked node: %v, %v", vifs, err)
	}
}

// TestVIFsRefuseUnknownNetworkInterface: a node whose network_interface
// is not one Rivet implements gets Ironic's InterfaceNotFoundInEntrypoint.
func TestVIFsRefuseUnknownNetworkInterface(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.node(h.enroll("node-1").UUID)
	for iface, ok := range map[string]bool{"noop": true, "flat": false} {
		n.NetworkInterface = &iface
		if err := h.store.Save(ctx, n); err != nil {
			t.Fatal(err)
		}
		_, err := h.api.VIFList(ctx, n)
		class, code := classOf(err)
		switch {
		case ok && err != nil:
			t.Errorf("%s: %v", iface, err)
		case !ok && (class != "InterfaceNotFoundInEntrypoint" || code != http.StatusBadRequest):
			t.Errorf("%s: %v (%s %d)", iface, err, class, code)
		}
	}
}

// TestInjectNMI: the NMI reaches the driver under the node's lease; a
// driver without NMI is UnsupportedDriverExtension; a BMC refusal is a
// driver error naming the operation.
func TestInjectNMI(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.node(h.enroll("node-1").UUID)
	if err := h.api.InjectNMI(ctx, n); err != nil {
		t.Fatal(err)
	}
	h.hw.mu.Lock()
	nmis := h.hw.nmis
	h.hw.mu.Unlock()
	if nmis != 1 {
		t.Fatalf("driver saw %d NMIs, want 1", nmis)
	}
	if got := h.node(n.UUID); got.Reservation != nil {
		t.Errorf("lease left behind: %v", *got.Reservation)
	}

	h.hw.set(func(f *hookedFake) {
		f.failNMI = fmt.Errorf("BMC does not support the diagnostic interrupt: %w", plugins.ErrNotSupported)
	})
	err := h.api.InjectNMI(ctx, n)
	if class, code := classOf(err); class != "DriverOperationError" || code != http.StatusBadRequest ||
		err.Error() != "Driver fake-hardware failed to inject NMI: BMC does not support the diagnostic interrupt: not supported" {
		t.Errorf("BMC refusal: %v (%s %d)", err, class, code)
	}
	h.hw.set(func(f *hookedFake) { f.failNMI = nil })

	if _, err := h.dbh.AcquireLease(ctx, n.UUID, "cond-other", time.Minute); err != nil {
		t.Fatal(err)
	}
	if class, code := classOf(h.api.InjectNMI(ctx, n)); class != "NodeLocked" || code != http.StatusConflict {
		t.Errorf("locked node: %s %d", class, code)
	}
}

// TestInjectNMIWithoutTheCapability: a hardware type whose driver has no
// NMIInjector answers Ironic's 400 for inject_nmi.
func TestInjectNMIWithoutTheCapability(t *testing.T) {
	h := startHarness(t, nil, "cond-a", nil, func(hw *hookedFake) StaticDrivers {
		return StaticDrivers{"no-nmi": withoutNMI{hw}}
	})
	name := "node-1"
	n, err := h.api.CreateNode(context.Background(), &objects.Node{Driver: "no-nmi", Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	err = h.api.InjectNMI(context.Background(), n)
	if class, code := classOf(err); class != "UnsupportedDriverExtension" || code != http.StatusBadRequest ||
		err.Error() != "Driver no-nmi does not support inject_nmi (disabled or not implemented)." {
		t.Fatalf("driver without NMI: %v (%s %d)", err, class, code)
	}
}

// withoutNMI hides the fake's InjectNMI: a driver without the capability.
type withoutNMI struct{ Hardware }

// TestVIFAndNMIAboveTheCap: a client capped below RPC 1.2 (or 1.3) refuses
// vif_* (or inject_nmi) before sending; a conductor asked at an older
// version than the method rejects it.
func TestVIFAndNMIAboveTheCap(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.node(h.enroll("node-1").UUID)
	capped := func(cap string) rpc.ConductorAPI {
		c := rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return version.MustParse(cap) },
			rpc.ObjectCodecFor(h.store.Registry(), nil), rpc.LocalTransport{Server: h.svc.RPCServer()})
		return rpc.ConductorAPI{Client: c, Router: h.api.Router}
	}
	calls := map[string]func(api rpc.ConductorAPI) error{
		"vif_list":   func(api rpc.ConductorAPI) error { _, err := api.VIFList(ctx, n); return err },
		"vif_attach": func(api rpc.ConductorAPI) error { return api.VIFAttach(ctx, n, map[string]any{"id": "v"}) },
		"vif_detach": func(api rpc.ConductorAPI) error { return api.VIFDetach(ctx, n, "v") },
		"inject_nmi": func(api rpc.ConductorAPI) error { return api.InjectNMI(ctx, n) },
	}
	for _, cap := range []string{"1.0", "1.1", "1.2"} {
		for method, call := range calls {
			needs := "1.2"
			if method == "inject_nmi" {
				needs = "1.3"
			}
			var ce *rpc.CapError
			refused := errors.As(call(capped(cap)), &ce)
			if want := version.MustParse(cap).Less(version.MustParse(needs)); refused != want {
				t.Errorf("%s under cap %s: refused %v, want %v", method, cap, refused, want)
			}
		}
	}
	h.hw.mu.Lock()
	nmis := h.hw.nmis
	h.hw.mu.Unlock()
	if nmis != 0 {
		t.Errorf("a capped client's NMI reached the driver")
	}
	// A request claiming an older version than the method is refused.
	node, _ := json.Marshal(n.UUID)
	for method, ver := range map[string]string{"inject_nmi": "1.2", "vif_list": "1.1"} {
		_, err := h.svc.RPCServer().Dispatch(ctx, &rpc.Request{Method: method, Version: ver,
			Params: map[string]json.RawMessage{"node_id": node}})
		var uv *rpc.UnsupportedVersionError
		if !errors.As(err, &uv) {
			t.Errorf("%s at RPC %s: %v, want UnsupportedVersion", method, ver, err)
		}
	}
}

// vifHolder returns the UUID of the port or portgroup holding vif.
func (h *harness) vifHolder(n *objects.Node, vif string) string {
	h.t.Helper()
	np, err := h.svc.loadNodePorts(context.Background(), n)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, p := range append(np.ports, np.groups...) {
		if p.vif() == vif {
			return p.uuid
		}
	}
	return ""
}

// port reads a port from the database.
func (h *harness) port(uuid string) *objects.Port {
	h.t.Helper()
	obj, err := h.store.Load(context.Background(), "Port", func(q *bunSelect) *bunSelect { return q.Where("?TableAlias.uuid = ?", uuid) })
	if err != nil {
		h.t.Fatal(err)
	}
	return obj.(*objects.Port)
}

// registered is a driver that reports a plugin registration and always
// has InjectNMI, as *host.Driver does.
type registered struct {
	*hookedFake
	reg     host.Registration
	running bool
}

func (r registered) Registration() (host.Registration, bool) { return r.reg, r.running }

func TestNMIInjectorFollowsTheCapability(t *testing.T) {
	hw := &hookedFake{Driver: fake.New(nil)}
	nmi := host.Registration{Capabilities: []plugins.Capability{plugins.CapabilityNMI}}
	tests := map[string]struct {
		hw   Hardware
		want bool
	}{
		"in-process driver with InjectNMI": {hw, true},
		"in-process driver without":        {withoutNMI{hw}, false},
		"plugin advertising nmi":           {registered{hw, nmi, true}, true},
		"plugin not advertising nmi":       {registered{hw, host.Registration{}, true}, false},
		"plugin not running yet: ask it":   {registered{hw, host.Registration{}, false}, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, got := nmiInjector(tc.hw); got != tc.want {
				t.Errorf("nmiInjector = %v, want %v", got, tc.want)
			}
		})
	}
}
