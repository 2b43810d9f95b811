package conductor

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
)

// The minimal lifecycle Ironic 21.4 walks with fake-hardware
// (reference/ironic.md §10.1), through the RPC handlers: every step
// returns before the work is done and the node ends at rest, unleased.
func TestLifecycleThroughRPC(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.enroll("node-1")
	if n.ProvisionState != "enroll" || n.UUID == "" {
		t.Fatalf("created node: state %q uuid %q", n.ProvisionState, n.UUID)
	}
	steps := []struct {
		name string
		do   func() error
		want string
	}{
		{"manage", func() error { return h.api.DoProvisioningAction(ctx, n, "manage") }, "manageable"},
		{"provide", func() error { return h.api.DoProvisioningAction(ctx, n, "provide") }, "available"},
		{"deploy", func() error { return h.api.DoNodeDeploy(ctx, n, false, nil) }, "active"},
		{"rebuild", func() error { return h.api.DoNodeDeploy(ctx, n, true, nil) }, "active"},
		{"undeploy", func() error { return h.api.DoNodeTearDown(ctx, n) }, "available"},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		got := h.waitState(n.UUID, s.want)
		if got.LastError != nil || got.TargetProvisionState != nil {
			t.Fatalf("%s: last_error %v, target %v", s.name, deref(got.LastError), deref(got.TargetProvisionState))
		}
		if s.name == "deploy" && (deref(got.PowerState) != "power on" || got.ConductorAffinity == nil || *got.ConductorAffinity != h.svc.conductorID.Load()) {
			t.Fatalf("deployed node: power %v affinity %v", deref(got.PowerState), got.ConductorAffinity)
		}
	}
	if err := h.api.DestroyNode(ctx, n); err != nil {
		t.Fatalf("destroy available node: %v", err)
	}
	if _, err := h.store.GetNode(ctx, n.UUID); err == nil {
		t.Fatal("node still there after destroy_node")
	}
}

func TestPowerAndBootDevice(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.enroll("node-1")
	for _, target := range []string{"power on", "power off", "rebooting"} {
		if err := h.api.ChangeNodePowerState(ctx, n, target, 0); err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		want := target
		if target == "rebooting" {
			want = "power on"
		}
		got := h.waitFor(n.UUID, want, func(n *objects.Node) bool { return n.TargetPowerState == nil && n.Reservation == nil })
		if deref(got.PowerState) != want || got.LastError != nil {
			t.Fatalf("%s: power_state %v last_error %v", target, deref(got.PowerState), deref(got.LastError))
		}
	}
	err := h.api.ChangeNodePowerState(ctx, n, "bogus", 0)
	if class, code := classOf(err); class != "InvalidParameterValue" || code != http.StatusBadRequest {
		t.Fatalf("bogus power state: %v (%s %d)", err, class, code)
	}
	// A failing driver: last_error names the driver and the operation, the
	// target is cleared and power_state keeps what was known.
	h.hw.set(func(f *hookedFake) { f.failPower = errors.New("BMC says no") })
	if err := h.api.ChangeNodePowerState(ctx, n, "power off", 0); err != nil {
		t.Fatal(err)
	}
	got := h.waitFor(n.UUID, "a recorded failure", func(n *objects.Node) bool { return n.LastError != nil && n.Reservation == nil })
	if want := "Driver fake-hardware failed to set power state to power off: BMC says no"; *got.LastError != want || got.TargetPowerState != nil || deref(got.PowerState) != "power on" {
		t.Fatalf("last_error %q (want %q), target %v, power %v", *got.LastError, want, got.TargetPowerState, deref(got.PowerState))
	}

	if err := h.api.SetBootDevice(ctx, n, "cdrom", true); err != nil {
		t.Fatal(err)
	}
	bd, err := h.api.GetBootDevice(ctx, n)
	if err != nil || bd.BootDevice == nil || *bd.BootDevice != "cdrom" || !*bd.Persistent {
		t.Fatalf("get_boot_device = %+v, %v", bd, err)
	}
	devs, err := h.api.GetSupportedBootDevices(ctx, n)
	if diff := cmp.Diff([]string{"pxe", "disk", "cdrom", "bios"}, devs); err != nil || diff != "" {
		t.Fatalf("supported boot devices: %v %s", err, diff)
	}
	err = h.api.SetBootDevice(ctx, n, "floppy", false)
	if class, _ := classOf(err); class != "InvalidParameterValue" {
		t.Fatalf("bad boot device: %v", err)
	}
}

func TestValidateAndDriverInfo(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.enroll("node-1")
	res, err := h.api.ValidateDriverInterfaces(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	for iface, want := range map[string]bool{"power": true, "management": true, "deploy": true, "boot": true,
		"inspect": true, "network": true, "storage": true, "console": false, "raid": false, "rescue": false} {
		got, ok := res[iface]
		if !ok || got.Result != want || (!want && (got.Reason == nil || *got.Reason != "not supported")) {
			t.Errorf("validate %s = %+v, want result %v", iface, got, want)
		}
	}
	props, err := h.api.GetDriverProperties(ctx, "fake-hardware")
	if err != nil || len(props) != 0 {
		t.Fatalf("fake-hardware properties = %v, %v", props, err)
	}
	methods, err := h.api.GetNodeVendorPassthruMethods(ctx, n)
	if err != nil || len(methods) != 0 {
		t.Fatalf("vendor methods = %v, %v", methods, err)
	}
	_, err = h.api.Client.Call(ctx, h.svc.Hostname(), "vendor_passthru", map[string]any{"node_id": n.UUID, "driver_method": "x", "http_method": "POST"})
	if class, code := classOf(err); class != "UnsupportedDriverExtension" || code != http.StatusBadRequest {
		t.Fatalf("vendor_passthru: %v (%s %d)", err, class, code)
	}
}

func TestDriverErrors(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	// The router would refuse an unknown hardware type (NoValidHost); the
	// conductor itself answers Ironic's DriverNotFound.
	name := "x"
	_, err := h.api.Client.Call(ctx, h.svc.Hostname(), "create_node", map[string]any{"node": &objects.Node{Driver: "ilo", Name: &name}})
	if class, _ := classOf(err); class != "DriverNotFound" || err.Error() != "Could not find the following driver(s) or hardware type(s): ilo." {
		t.Fatalf("unknown hardware type: %v (%s)", err, class)
	}
	_, err = h.api.Client.Call(ctx, h.svc.Hostname(), "get_driver_properties", map[string]any{"driver_name": "ilo"})
	if class, _ := classOf(err); class != "DriverNotFound" {
		t.Fatalf("properties of unknown hardware type: %v", err)
	}
	n := h.enroll("node-1")
	if _, err := h.api.CreateNode(ctx, &objects.Node{Driver: "fake-hardware", Name: &[]string{"node-1"}[0]}); err == nil {
		t.Fatal("duplicate name accepted")
	} else if class, code := classOf(err); class != "DuplicateName" || code != http.StatusConflict {
		t.Fatalf("duplicate name: %v (%s %d)", err, class, code)
	}
	// Invalid transition: Ironic's InvalidStateRequested, 400, no change.
	err = h.api.DoNodeDeploy(ctx, n, false, nil)
	if class, code := classOf(err); class != "InvalidStateRequested" || code != http.StatusBadRequest {
		t.Fatalf("deploy from enroll: %v (%s %d)", err, class, code)
	}
	if got := h.node(n.UUID); got.ProvisionState != "enroll" || got.Reservation != nil {
		t.Fatalf("refused deploy changed the node: %q %v", got.ProvisionState, deref(got.Reservation))
	}
	// Deleting an active node is InvalidState (409).
	h.makeAvailable(n)
	if err := h.api.DoNodeDeploy(ctx, n, false, nil); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "active")
	err = h.api.DestroyNode(ctx, n)
	if class, code := classOf(err); class != "InvalidState" || code != http.StatusConflict {
		t.Fatalf("destroy active: %v (%s %d)", err, class, code)
	}
	// A failing deploy lands in deploy failed with last_error, stored with
	// the credentials the driver's error quoted masked.
	h.hw.set(func(f *hookedFake) {
		f.failDeploy = errors.New("image https://mirror:ImgPw@mirror.example/img.qcow2?token=Tok unreachable")
	})
	if err := h.api.DoNodeDeploy(ctx, n, true, nil); err != nil {
		t.Fatal(err)
	}
	got := h.waitState(n.UUID, "deploy failed")
	if want := "Driver fake-hardware failed to deploy: image https://***:***@mirror.example/img.qcow2?token=*** unreachable"; deref(got.LastError) != want {
		t.Fatalf("last_error %q, want %q", deref(got.LastError), want)
	}
}

// Inspection fills properties and creates a port per NIC; manual cleaning
// returns to manageable; abort and adopt; ports under the node's lease.
func TestInspectCleanAdoptAndPorts(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.enroll("node-1")
	if err := h.api.DoProvisioningAction(ctx, n, "manage"); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "manageable")
	if err := h.api.InspectHardware(ctx, n); err != nil {
		t.Fatal(err)
	}
	got := h.waitState(n.UUID, "manageable")
	if got.Properties["cpus"] == nil || got.Properties["memory_mb"] == nil || got.InspectionFinishedAt == nil {
		t.Fatalf("properties after inspection: %v", got.Properties)
	}
	ports, err := h.store.LoadAll(ctx, "Port", func(q *bunSelect) *bunSelect { return q.Where("node_id = ?", got.ID) })
	if err != nil || len(ports) != 1 {
		t.Fatalf("ports after inspection: %d, %v", len(ports), err)
	}

	err = h.api.DoNodeClean(ctx, n, []map[string]any{})
	if class, _ := classOf(err); class != "InvalidParameterValue" {
		t.Fatalf("clean without steps: %v", err)
	}
	if err := h.api.DoNodeClean(ctx, n, []map[string]any{{"interface": "deploy", "step": "erase_devices"}}); err != nil {
		t.Fatal(err)
	}
	if got := h.waitState(n.UUID, "manageable"); got.LastError != nil || len(got.CleanStep) != 0 {
		t.Fatalf("after manual clean: %v %v", deref(got.LastError), got.CleanStep)
	}
	if err := h.api.DoNodeClean(ctx, n, []map[string]any{{"interface": "deploy", "step": "no_such_step"}}); err != nil {
		t.Fatal(err)
	}
	if got := h.waitState(n.UUID, "clean failed"); got.LastError == nil {
		t.Fatal("failed clean step left no last_error")
	}
	if err := h.api.DoProvisioningAction(ctx, n, "manage"); err != nil {
		t.Fatal(err)
	}
	if err := h.api.DoProvisioningAction(ctx, n, "adopt"); err != nil {
		t.Fatal(err)
	}
	if got := h.waitState(n.UUID, "active"); got.ConductorAffinity == nil {
		t.Fatal("adopted node has no conductor_affinity")
	}

	// Ports: create (MAC normalised), duplicate MAC 409, update, destroy.
	p, err := h.api.CreatePort(ctx, n, &objects.Port{Address: "AA-BB-CC-DD-EE-01", NodeID: got.ID, PXEEnabled: true})
	if err != nil || p.Address != "aa:bb:cc:dd:ee:01" || p.UUID == "" {
		t.Fatalf("create_port = %+v, %v", p, err)
	}
	_, err = h.api.CreatePort(ctx, n, &objects.Port{Address: "aa:bb:cc:dd:ee:01", NodeID: got.ID})
	if class, code := classOf(err); class != "MACAlreadyExists" || code != http.StatusConflict {
		t.Fatalf("duplicate MAC: %v (%s %d)", err, class, code)
	}
	_, err = h.api.CreatePort(ctx, n, &objects.Port{Address: "nope", NodeID: got.ID})
	if class, _ := classOf(err); class != "InvalidParameterValue" {
		t.Fatalf("bad MAC: %v", err)
	}
	p.Extra = map[string]any{"rack": "r1"}
	up, err := h.api.UpdatePort(ctx, n, p)
	if err != nil || up.Extra["rack"] != "r1" {
		t.Fatalf("update_port = %+v, %v", up, err)
	}
	if err := h.api.DestroyPort(ctx, n, up); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.loadChild(ctx, "Port", up.UUID); err == nil {
		t.Fatal("port still there after destroy_port")
	}
	if got := h.node(n.UUID); got.Reservation != nil {
		t.Fatalf("port calls left the node leased by %s", *got.Reservation)
	}
}

// A ramdisk agent's heartbeat is recorded, and resumes a deploy waiting
// for it.
func TestAgentHeartbeatResumesDeploy(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.enroll("node-1")
	h.makeAvailable(n)
	h.waitState(n.UUID, "available")
	up := h.node(n.UUID)
	up.InstanceInfo = map[string]any{AgentCallbackKey: true}
	if _, err := h.api.UpdateNode(ctx, up); err != nil {
		t.Fatal(err)
	}
	if err := h.api.DoNodeDeploy(ctx, n, false, nil); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "wait call-back")
	token := h.lookupToken(n)
	if err := h.api.Heartbeat(ctx, n, "http://10.0.0.5:9999", "9.1.0", agenttoken.Digest(token)); err != nil {
		t.Fatal(err)
	}
	got := h.waitState(n.UUID, "active")
	// The deploy is over: the token and the callback URL go with it.
	if got.DriverInternalInfo["agent_version"] != "9.1.0" || got.DriverInternalInfo["agent_last_heartbeat"] == nil {
		t.Fatalf("driver_internal_info = %v", got.DriverInternalInfo)
	}
	if _, ok := got.DriverInternalInfo["agent_url"]; ok || agenttoken.Present(got.DriverInternalInfo) {
		t.Fatalf("token or agent_url kept after the deploy: %v", got.DriverInternalInfo)
	}
}

// Every method of the RPC table has a handler.
func TestEveryMethodServed(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	for _, m := range rpc.ConductorMethods().Names() {
		_, err := h.svc.RPCServer().Dispatch(context.Background(), &rpc.Request{Method: m, Version: "1.0", Params: nil})
		var nf *rpc.MethodNotFoundError
		if errors.As(err, &nf) {
			t.Errorf("%s: not served", m)
		}
	}
}
