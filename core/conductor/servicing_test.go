package conductor

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/version"
)

// raidNode is an active fake-hardware node using the fake raid interface.
func (h *harness) raidNode(name string) *objects.Node {
	h.t.Helper()
	n := h.active(name)
	// An active node's interfaces change only in maintenance.
	if err := h.update(n.UUID, func(n *objects.Node) { n.RAIDInterface, n.Maintenance = ptr("fake"), true }); err != nil {
		h.t.Fatal(err)
	}
	if err := h.update(n.UUID, func(n *objects.Node) { n.Maintenance = false }); err != nil {
		h.t.Fatal(err)
	}
	return h.node(n.UUID)
}

func raidStep(step string, args map[string]any) map[string]any {
	if args == nil {
		args = map[string]any{}
	}
	return map[string]any{"interface": "raid", "step": step, "args": args}
}

// Servicing (API 1.87) runs the given service steps on an active node and
// returns it to active: raid.apply_configuration sets the target, creates
// the volumes and records raid_config, local_gb and the raid_level
// capability; raid.delete_configuration clears raid_config.
func TestServiceRAIDSteps(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.raidNode("node-1")
	cfg := map[string]any{"logical_disks": []any{
		map[string]any{"size_gb": "MAX", "raid_level": "5"},
		map[string]any{"size_gb": 100, "raid_level": "1", "is_root_volume": true, "volume_name": "root"},
	}}
	if err := h.api.DoNodeService(ctx, n, []map[string]any{raidStep("apply_configuration", map[string]any{"raid_config": cfg})}, false); err != nil {
		t.Fatal(err)
	}
	got := h.waitState(n.UUID, "active")
	if got.LastError != nil || got.Maintenance {
		t.Fatalf("after service: last_error %v, maintenance %v", deref(got.LastError), got.Maintenance)
	}
	disks, _ := got.RAIDConfig["logical_disks"].([]any)
	if len(disks) != 2 || got.RAIDConfig["last_updated"] == nil {
		t.Fatalf("raid_config = %v", got.RAIDConfig)
	}
	first, _ := disks[0].(map[string]any)
	if first["volume_name"] != "root" || first["is_root_volume"] != true {
		t.Errorf("the root volume is created first: %v", disks)
	}
	second, _ := disks[1].(map[string]any)
	if size, ok := toFloat(second["size_gb"]); !ok || size != 3900 {
		t.Errorf("MAX volume got %v GiB, want the 3900 left of the fake's 4000", second["size_gb"])
	}
	if v, _ := toInt(got.Properties["local_gb"]); v != 100 || got.Properties["capabilities"] != "raid_level:1" {
		t.Errorf("properties %v, want local_gb 100 and raid_level:1", got.Properties)
	}
	if len(got.TargetRAIDConfig) == 0 || len(got.ServiceStep) != 0 {
		t.Errorf("target_raid_config %v, service_step %v", got.TargetRAIDConfig, got.ServiceStep)
	}
	for _, k := range serviceKeys {
		if _, ok := got.DriverInternalInfo[k]; ok {
			t.Errorf("driver_internal_info keeps %s after servicing", k)
		}
	}
	if v, err := h.api.ValidateDriverInterfaces(ctx, got); err != nil || !v["raid"].Result {
		t.Errorf("validate raid: %+v, %v", v["raid"], err)
	}
	if err := h.api.DoNodeService(ctx, got, []map[string]any{raidStep("delete_configuration", nil)}, true); err != nil {
		t.Fatal(err)
	}
	if got = h.waitState(n.UUID, "active"); len(got.RAIDConfig) != 0 {
		t.Errorf("raid_config after delete_configuration = %v", got.RAIDConfig)
	}
}

// A step the node does not offer for servicing fails the servicing
// (service failed, last_error naming it, no maintenance: no step ran);
// abort returns the node to active. A step that fails while running puts
// the node in maintenance with the fault "service failure", as Ironic's
// servicing_error_handler; service again retries from service failed.
func TestServiceFailures(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.raidNode("node-1")

	// create_configuration is a clean step only.
	if err := h.api.DoNodeService(ctx, n, []map[string]any{raidStep("create_configuration", nil)}, false); err != nil {
		t.Fatal(err)
	}
	got := h.waitState(n.UUID, "service failed")
	if !strings.Contains(deref(got.LastError), "node does not support this service step: raid.create_configuration") || got.Maintenance {
		t.Fatalf("last_error %q, maintenance %v", deref(got.LastError), got.Maintenance)
	}
	if err := h.api.DoProvisioningAction(ctx, got, "abort"); err != nil {
		t.Fatal(err)
	}
	got = h.waitState(n.UUID, "active")
	if deref(got.LastError) != "By request, the service operation was aborted" {
		t.Errorf("after abort: last_error %q", deref(got.LastError))
	}

	// 5000 GiB does not fit the fake's 4000.
	big := map[string]any{"logical_disks": []any{map[string]any{"size_gb": 5000, "raid_level": "0"}}}
	if err := h.api.DoNodeService(ctx, got, []map[string]any{raidStep("apply_configuration", map[string]any{"raid_config": big})}, false); err != nil {
		t.Fatal(err)
	}
	got = h.waitState(n.UUID, "service failed")
	if !got.Maintenance || deref(got.Fault) != objects.FaultServiceFailure || len(got.ServiceStep) != 0 ||
		!strings.Contains(deref(got.LastError), "failed service step raid.apply_configuration") {
		t.Fatalf("maintenance %v, fault %v, service_step %v, last_error %q", got.Maintenance, deref(got.Fault), got.ServiceStep, deref(got.LastError))
	}
	// In maintenance, service and abort are refused synchronously.
	err := h.api.DoNodeService(ctx, got, []map[string]any{raidStep("delete_configuration", nil)}, false)
	wantClass(t, err, "NodeInMaintenance", http.StatusBadRequest)
	err = h.api.DoProvisioningAction(ctx, got, "abort")
	wantClass(t, err, "InvalidState", http.StatusConflict)
	if err := h.update(n.UUID, func(n *objects.Node) { n.Maintenance = false }); err != nil {
		t.Fatal(err)
	}
	if err := h.api.DoNodeService(ctx, h.node(n.UUID), []map[string]any{raidStep("delete_configuration", nil)}, false); err != nil {
		t.Fatal(err)
	}
	if got = h.waitState(n.UUID, "active"); got.LastError != nil || got.Fault != nil {
		t.Errorf("retry from service failed: last_error %v, fault %v", deref(got.LastError), deref(got.Fault))
	}

	// A node with no-raid has no raid steps.
	plain := h.active("node-2")
	if err := h.api.DoNodeService(ctx, plain, []map[string]any{raidStep("delete_configuration", nil)}, false); err != nil {
		t.Fatal(err)
	}
	if got = h.waitState(plain.UUID, "service failed"); !strings.Contains(deref(got.LastError), "does not offer it") {
		t.Errorf("no-raid node: last_error %q", deref(got.LastError))
	}
	// Only an active (or service failed) node is serviced.
	err = h.api.DoNodeService(ctx, h.enroll("node-3"), []map[string]any{raidStep("delete_configuration", nil)}, false)
	wantClass(t, err, "InvalidStateRequested", http.StatusBadRequest)
}

// TestServiceRPCCapped: a client capped below RPC 1.5 (pinned to release
// 0.2) refuses do_node_service before sending anything.
func TestServiceRPCCapped(t *testing.T) {
	h := newHarness(t, nil, "cond-1", nil)
	n := h.active("node-1")
	api := h.cappedAPI("1.4")
	err := api.DoNodeService(context.Background(), n, []map[string]any{raidStep("delete_configuration", nil)}, false)
	var ce *rpc.CapError
	if !errors.As(err, &ce) {
		t.Fatalf("do_node_service capped at 1.4: %v, want *rpc.CapError", err)
	}
	if got := h.node(n.UUID); got.ProvisionState != "active" {
		t.Errorf("a capped do_node_service moved the node to %s", got.ProvisionState)
	}
}

// Manual cleaning runs the raid clean steps: create_configuration creates
// target_raid_config's volumes, delete_configuration removes them.
func TestCleanRAIDSteps(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.enroll("node-1")
	target := map[string]any{"logical_disks": []any{map[string]any{"size_gb": 50, "raid_level": "1", "is_root_volume": true}}}
	if err := h.update(n.UUID, func(n *objects.Node) { n.RAIDInterface, n.TargetRAIDConfig = ptr("fake"), target }); err != nil {
		t.Fatal(err)
	}
	if err := h.api.DoProvisioningAction(ctx, h.node(n.UUID), "manage"); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "manageable")
	steps := []map[string]any{raidStep("delete_configuration", nil), raidStep("create_configuration", map[string]any{"create_nonroot_volumes": false})}
	if err := h.api.DoNodeClean(ctx, h.node(n.UUID), steps); err != nil {
		t.Fatal(err)
	}
	got := h.waitState(n.UUID, "manageable")
	if disks, _ := got.RAIDConfig["logical_disks"].([]any); got.LastError != nil || len(disks) != 1 {
		t.Fatalf("after cleaning: last_error %v, raid_config %v", deref(got.LastError), got.RAIDConfig)
	}
	// Without a target there is nothing to create.
	if err := h.update(n.UUID, func(n *objects.Node) { n.TargetRAIDConfig = map[string]any{} }); err != nil {
		t.Fatal(err)
	}
	if err := h.api.DoNodeClean(ctx, h.node(n.UUID), steps[1:]); err != nil {
		t.Fatal(err)
	}
	got = h.waitState(n.UUID, "clean failed")
	if !strings.Contains(deref(got.LastError), "has no target RAID configuration") {
		t.Errorf("last_error %q", deref(got.LastError))
	}
}

// noRAID is a driver whose plugin predates the raid interface: it has
// every other method of the fake.
type noRAID struct{ Hardware }

// An older plugin (no raid interface negotiated) offers no raid
// implementation: choosing one is Ironic's 400 naming the valid ones, and
// a raid service step fails the servicing with a clear message, nothing
// crashes.
func TestRAIDOlderPlugin(t *testing.T) {
	h := startHarness(t, nil, "cond-a", nil, func(hw *hookedFake) StaticDrivers {
		return StaticDrivers{"fake-hardware": noRAID{hw}}
	})
	ctx := context.Background()
	n := h.enroll("node-1")
	err := h.update(n.UUID, func(n *objects.Node) { n.RAIDInterface = ptr("fake") })
	if c, code := classOf(err); code != http.StatusBadRequest || !strings.Contains(err.Error(), "Valid interfaces are ['no-raid']") {
		t.Fatalf("raid_interface fake with an older plugin: %v (%s %d)", err, c, code)
	}
	a := h.active("node-2")
	if err := h.api.DoNodeService(ctx, a, []map[string]any{raidStep("delete_configuration", nil)}, false); err != nil {
		t.Fatal(err)
	}
	if got := h.waitState(a.UUID, "service failed"); !strings.Contains(deref(got.LastError), "node does not support this service step: raid.delete_configuration") {
		t.Errorf("last_error %q", deref(got.LastError))
	}
}

// The direct deploy runs the raid interface's deploy steps:
// raid.apply_configuration at a priority above the agent's boot runs
// first and records raid_config; raid.create_configuration, a clean step
// only, is refused before the deploy starts.
func TestDeployRAIDStep(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.directNode("node-1", nil)
	if err := h.update(n.UUID, func(n *objects.Node) { n.RAIDInterface = ptr("fake") }); err != nil {
		t.Fatal(err)
	}
	n = h.node(n.UUID)
	bad := []map[string]any{{"interface": "raid", "step": "create_configuration", "priority": 150, "args": map[string]any{}}}
	err := h.api.DoNodeDeploy(ctx, n, false, nil, bad)
	wantClass(t, err, "InvalidParameterValue", http.StatusBadRequest)
	if !strings.Contains(err.Error(), "node does not support this deploy step: raid.create_configuration") {
		t.Errorf("message %q", err.Error())
	}
	cfg := map[string]any{"logical_disks": []any{map[string]any{"size_gb": 100, "raid_level": "1", "is_root_volume": true}}}
	good := []map[string]any{{"interface": "raid", "step": "apply_configuration", "priority": 150, "args": map[string]any{"raid_config": cfg}}}
	if err := h.api.DoNodeDeploy(ctx, h.node(n.UUID), false, nil, good); err != nil {
		t.Fatal(err)
	}
	got := h.waitState(n.UUID, "wait call-back")
	if disks, _ := got.RAIDConfig["logical_disks"].([]any); len(disks) != 1 || got.LastError != nil {
		t.Fatalf("raid_config %v, last_error %v", got.RAIDConfig, deref(got.LastError))
	}
}

// BIOS and firmware steps run in servicing, as Ironic's redfish
// apply_configuration, factory_reset and update (service steps too): what
// Metal3 does to a provisioned host's firmware settings. The step runs
// through the bios interface (fake-hardware's default, fake), the node
// returns to active. A node on no-bios is not offered it.
func TestServiceBIOSStep(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.active("node-1")
	if deref(n.BIOSInterface) != "fake" {
		t.Fatalf("bios_interface %q, want fake-hardware's default fake", deref(n.BIOSInterface))
	}
	step := map[string]any{"interface": "bios", "step": "apply_configuration", "args": map[string]any{
		"settings": []any{map[string]any{"name": "ProcVirtualization", "value": "Disabled"}}}}
	if err := h.api.DoNodeService(ctx, h.node(n.UUID), []map[string]any{step}, false); err != nil {
		t.Fatal(err)
	}
	got := h.waitState(n.UUID, "active")
	if got.LastError != nil || got.Maintenance || len(got.ServiceStep) != 0 {
		t.Fatalf("after service: last_error %v, maintenance %v, service_step %v", deref(got.LastError), got.Maintenance, got.ServiceStep)
	}
	settings, err := h.hw.GetBIOSSettings(ctx, pluginNode(got))
	if err != nil {
		t.Fatal(err)
	}
	applied := false
	for _, st := range settings {
		applied = applied || (st.Name == "ProcVirtualization" && st.Value != nil && *st.Value == "Disabled")
	}
	if !applied {
		t.Errorf("BIOS settings after the service step: %+v", settings)
	}

	plain := h.active("node-2")
	if err := h.update(plain.UUID, func(n *objects.Node) { n.BIOSInterface, n.Maintenance = ptr("no-bios"), true }); err != nil {
		t.Fatal(err)
	}
	if err := h.update(plain.UUID, func(n *objects.Node) { n.Maintenance = false }); err != nil {
		t.Fatal(err)
	}
	if err := h.api.DoNodeService(ctx, h.node(plain.UUID), []map[string]any{step}, false); err != nil {
		t.Fatal(err)
	}
	if got := h.waitState(plain.UUID, "service failed"); !strings.Contains(deref(got.LastError), "bios.apply_configuration (driver fake-hardware does not offer it)") {
		t.Errorf("no-bios node: last_error %v", deref(got.LastError))
	}
}

// cappedAPI is a conductor client of this harness's conductor capped at
// RPC version ver, as an API pinned to an older release has.
func (h *harness) cappedAPI(ver string) rpc.ConductorAPI {
	capped := rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return version.MustParse(ver) },
		rpc.ObjectCodecFor(h.store.Registry(), release.NewPinner(release.Default(), release.Pin{Mode: release.PinLatest})),
		rpc.LocalTransport{Server: h.svc.RPCServer()})
	return rpc.ConductorAPI{Client: capped, Router: h.api.Router}
}
