package conductor

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
)

func step(iface, name string, args map[string]any) map[string]any {
	st := map[string]any{"interface": iface, "step": name}
	if args != nil {
		st["args"] = args
	}
	return st
}

// Servicing's reserved steps, as Ironic's use_reserved_step_handler:
// power_off and power_on act on the node's power whatever interface they
// name; hold leaves the node in service hold with the step shown, where it
// may be changed, until unhold runs the steps after it; wait pauses at
// most [conductor] max_conductor_wait_step_seconds.
func TestServiceHoldUnhold(t *testing.T) {
	h := newHarness(t, nil, "cond-a", func(c *Config) { c.MaxWaitStep = 50 * time.Millisecond })
	ctx := context.Background()
	n := h.active("node-1")

	plan := []map[string]any{
		step("power", "power_off", nil), step("deploy", "hold", nil),
		step("power", "power_on", nil), step("deploy", "wait", map[string]any{"seconds": 3600}),
	}
	if err := h.api.DoNodeService(ctx, n, plan, false); err != nil {
		t.Fatal(err)
	}
	held := h.waitState(n.UUID, "service hold")
	if deref(held.PowerState) != "power off" || held.ServiceStep["step"] != "hold" || held.LastError != nil {
		t.Fatalf("held: power %q, service_step %v, last_error %q", deref(held.PowerState), held.ServiceStep, deref(held.LastError))
	}
	if i, _ := toInt(held.DriverInternalInfo[diiServiceStepIndex]); i != 1 || deref(held.TargetProvisionState) != "active" {
		t.Fatalf("held at index %v, target %q", held.DriverInternalInfo[diiServiceStepIndex], deref(held.TargetProvisionState))
	}
	// What the hold is for: the node may be changed meanwhile.
	if err := h.update(n.UUID, func(n *objects.Node) { n.Extra = map[string]any{"checked": "yes"} }); err != nil {
		t.Fatalf("update in service hold: %v", err)
	}

	if err := h.api.DoProvisioningAction(ctx, held, "unhold"); err != nil {
		t.Fatal(err)
	}
	// The wait asks for an hour; the cap makes it 50 ms.
	got := h.waitState(n.UUID, "active")
	if deref(got.PowerState) != "power on" || got.LastError != nil || len(got.ServiceStep) != 0 || got.Extra["checked"] != "yes" {
		t.Fatalf("after unhold: power %q, last_error %q, service_step %v, extra %v",
			deref(got.PowerState), deref(got.LastError), got.ServiceStep, got.Extra)
	}
	for _, k := range serviceKeys {
		if _, ok := got.DriverInternalInfo[k]; ok {
			t.Errorf("driver_internal_info keeps %s after servicing", k)
		}
	}
	// unhold from a state without a hold.
	wantClass(t, h.api.DoProvisioningAction(ctx, got, "unhold"), "InvalidStateRequested", http.StatusBadRequest)

	// From service hold, service starts new steps.
	if err := h.api.DoNodeService(ctx, got, []map[string]any{step("management", "hold", nil)}, false); err != nil {
		t.Fatal(err)
	}
	held = h.waitState(n.UUID, "service hold")
	if err := h.api.DoNodeService(ctx, held, []map[string]any{step("power", "reboot", nil)}, false); err != nil {
		t.Fatal(err)
	}
	if got = h.waitState(n.UUID, "active"); got.LastError != nil || deref(got.PowerState) != "power on" {
		t.Fatalf("service from hold: last_error %q, power %q", deref(got.LastError), deref(got.PowerState))
	}

	// Abort from service hold returns the node to active, saying so.
	if err := h.api.DoNodeService(ctx, got, []map[string]any{step("deploy", "hold", nil), step("power", "power_off", nil)}, false); err != nil {
		t.Fatal(err)
	}
	held = h.waitState(n.UUID, "service hold")
	if err := h.api.DoProvisioningAction(ctx, held, "abort"); err != nil {
		t.Fatal(err)
	}
	got = h.waitState(n.UUID, "active")
	if want := `By request, the service operation was aborted during or after the completion of step "deploy.hold"`; deref(got.LastError) != want {
		t.Errorf("after abort: last_error %q, want %q", deref(got.LastError), want)
	}
	if deref(got.PowerState) != "power on" {
		t.Errorf("the step after the aborted hold ran: power %q", deref(got.PowerState))
	}
}

// A wait step without a whole number of seconds fails the servicing
// before any step runs (nothing would end it: no agent heartbeats during
// out-of-band servicing); power_off is refused on a node whose power may
// not be turned off (disable_power_off, API 1.95).
func TestServiceReservedStepFailures(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.active("node-1")
	if err := h.api.DoNodeService(ctx, n, []map[string]any{step("power", "power_off", nil), step("deploy", "wait", nil)}, false); err != nil {
		t.Fatal(err)
	}
	got := h.waitState(n.UUID, "service failed")
	if !strings.Contains(deref(got.LastError), "service step deploy.wait needs args.seconds") || deref(got.PowerState) != "power on" {
		t.Fatalf("last_error %q, power %q (no step may run)", deref(got.LastError), deref(got.PowerState))
	}
	if err := h.api.DoProvisioningAction(ctx, got, "abort"); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "active")
	if err := h.update(n.UUID, func(n *objects.Node) { n.DisablePowerOff = true }); err != nil {
		t.Fatal(err)
	}
	if err := h.api.DoNodeService(ctx, h.node(n.UUID), []map[string]any{step("power", "reboot", nil)}, false); err != nil {
		t.Fatal(err)
	}
	got = h.waitState(n.UUID, "service failed")
	if !strings.Contains(deref(got.LastError), "power.reboot") || deref(got.PowerState) != "power on" {
		t.Fatalf("reboot of a disable_power_off node: last_error %q, power %q", deref(got.LastError), deref(got.PowerState))
	}
}

// TestServiceHoldRPCCapped: a client capped at RPC 1.5 (pinned to 0.3)
// refuses service steps naming a reserved step and unhold before sending
// anything; other service steps still go.
func TestServiceHoldRPCCapped(t *testing.T) {
	h := newHarness(t, nil, "cond-1", nil)
	n := h.active("node-1")
	api := h.cappedAPI("1.5")
	ctx := context.Background()
	var ce *rpc.CapError
	if err := api.DoNodeService(ctx, n, []map[string]any{step("deploy", "hold", nil)}, false); !errors.As(err, &ce) {
		t.Fatalf("hold capped at 1.5: %v, want *rpc.CapError", err)
	}
	if err := api.DoProvisioningAction(ctx, n, "unhold"); !errors.As(err, &ce) {
		t.Fatalf("unhold capped at 1.5: %v, want *rpc.CapError", err)
	}
	if got := h.node(n.UUID); got.ProvisionState != "active" {
		t.Fatalf("a capped call moved the node to %s", got.ProvisionState)
	}
	if err := api.DoProvisioningAction(ctx, n, "abort"); err == nil || errors.As(err, &ce) {
		t.Errorf("abort at 1.5 (a value 1.5 knows) = %v, want the conductor's refusal", err)
	}
}

// The steps before a hold are not checked again at unhold: a node whose
// raid interface was taken away while held (what a hold is for) goes on
// with the steps after the hold.
func TestServiceUnholdChecksOnlyTheStepsLeft(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.raidNode("node-1")
	if err := h.api.DoNodeService(ctx, n, []map[string]any{raidStep("delete_configuration", nil), step("deploy", "hold", nil),
		step("power", "reboot", nil)}, false); err != nil {
		t.Fatal(err)
	}
	held := h.waitState(n.UUID, "service hold")
	// Interfaces change in maintenance only.
	if err := h.update(n.UUID, func(n *objects.Node) { n.RAIDInterface, n.Maintenance = ptr("no-raid"), true }); err != nil {
		t.Fatalf("changing the raid interface in service hold: %v", err)
	}
	if err := h.update(n.UUID, func(n *objects.Node) { n.Maintenance = false }); err != nil {
		t.Fatal(err)
	}
	held = h.node(n.UUID)
	if err := h.api.DoProvisioningAction(ctx, held, "unhold"); err != nil {
		t.Fatal(err)
	}
	if got := h.waitState(n.UUID, "active"); got.LastError != nil {
		t.Fatalf("after unhold: last_error %q", deref(got.LastError))
	}
}
