package conductor

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
)

// TestSoftPower runs soft power actions through change_node_power_state
// (RPC 1.1) against fake-hardware, whose simulated OS takes
// fake_soft_power_delay to act: while it works the node is reserved with
// Ironic's target_power_state (the final state: "power off" for a soft power
// off, "power on" for a soft reboot); then power_state is the final state.
func TestSoftPower(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.enroll("node-1")
	n.DriverInfo = map[string]any{fake.SoftPowerDelayKey: 0.3}
	n, err := h.api.UpdateNode(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.api.ChangeNodePowerState(ctx, n, "power on", 0); err != nil {
		t.Fatal(err)
	}
	h.waitFor(n.UUID, "power on", func(n *objects.Node) bool { return deref(n.PowerState) == "power on" && n.Reservation == nil })
	for _, step := range []struct {
		target, final string
		osActs        bool // the node is on: the OS takes its time
	}{
		{"soft rebooting", "power on", true}, {"soft power off", "power off", true}, {"soft rebooting", "power on", false},
	} {
		if err := h.api.ChangeNodePowerState(ctx, n, step.target, 30); err != nil {
			t.Fatalf("%s: %v", step.target, err)
		}
		if mid := h.node(n.UUID); step.osActs && (deref(mid.TargetPowerState) != step.final || mid.Reservation == nil) {
			t.Errorf("%s in progress: target_power_state %v, reservation %v; want %q, held", step.target, deref(mid.TargetPowerState), deref(mid.Reservation), step.final)
		}
		got := h.waitFor(n.UUID, step.final, func(n *objects.Node) bool { return n.TargetPowerState == nil && n.Reservation == nil })
		if deref(got.PowerState) != step.final || got.LastError != nil {
			t.Fatalf("%s: power_state %v last_error %v, want %s", step.target, deref(got.PowerState), deref(got.LastError), step.final)
		}
	}
}

// TestSoftPowerTimeouts: a soft action the OS does not finish within its
// timeout fails into last_error, target cleared and power_state as it was;
// without a timeout, soft actions wait Config.SoftPowerOffTimeout. Timeouts
// out of range are refused before anything changes.
func TestSoftPowerTimeouts(t *testing.T) {
	h := newHarness(t, nil, "cond-a", func(c *Config) { c.SoftPowerOffTimeout = 200 * time.Millisecond })
	ctx := context.Background()
	n := h.enroll("node-1")
	n.DriverInfo = map[string]any{fake.SoftPowerDelayKey: 2}
	n, err := h.api.UpdateNode(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.api.ChangeNodePowerState(ctx, n, "power on", 0); err != nil {
		t.Fatal(err)
	}
	h.waitFor(n.UUID, "power on", func(n *objects.Node) bool { return deref(n.PowerState) == "power on" && n.Reservation == nil })
	for _, tc := range []struct {
		timeout int
		want    string
	}{
		{1, "Driver fake-hardware failed to set power state to soft power off within 1s: fake: node " + n.UUID + ": soft power off: the operating system did not act within 1s (it takes 2s)"},
		{0, "the operating system did not act within 200ms"},
	} {
		if err := h.api.ChangeNodePowerState(ctx, n, "soft power off", tc.timeout); err != nil {
			t.Fatal(err)
		}
		got := h.waitFor(n.UUID, "a recorded failure", func(n *objects.Node) bool { return n.LastError != nil && n.Reservation == nil })
		if !strings.Contains(*got.LastError, tc.want) || got.TargetPowerState != nil || deref(got.PowerState) != "power on" {
			t.Errorf("timeout %d: last_error %q (want %q), target %v, power %v", tc.timeout, *got.LastError, tc.want, deref(got.TargetPowerState), deref(got.PowerState))
		}
	}
	_, err = h.api.Client.Call(ctx, h.svc.Hostname(), "change_node_power_state", map[string]any{"node_id": n.UUID, "new_state": "power off", "timeout": 0})
	if class, code := classOf(err); class != "InvalidParameterValue" || code != http.StatusBadRequest || !strings.Contains(err.Error(), "timeout has to be positive integer") {
		t.Errorf("timeout 0: %v (%s %d)", err, class, code)
	}
}

// powerV1Only is an in-process driver with power interface version 1 only:
// embedding the Hardware interface hides fake's version 2 methods.
type powerV1Only struct{ Hardware }

// TestSoftPowerRefused: a driver without power interface version 2 gets
// neither soft targets nor timeouts: Ironic's InvalidParameterValue (400)
// before the node changes, saying what the driver lacks.
func TestSoftPowerRefused(t *testing.T) {
	h := startHarness(t, nil, "cond-a", nil, func(hw *hookedFake) StaticDrivers {
		return StaticDrivers{fake.HardwareType: powerV1Only{hw}}
	})
	ctx := context.Background()
	n := h.enroll("node-1")
	for _, tc := range []struct {
		target  string
		timeout int
		want    string
	}{
		{"soft power off", 0, "The driver fake-hardware does not support the power state, soft power off: soft power off: the driver has no soft power"},
		{"soft rebooting", 60, "The driver fake-hardware does not support the power state, soft rebooting: "},
		{"power on", 60, "The driver fake-hardware does not support a timeout for the power state, power on: power on with a timeout"},
	} {
		err := h.api.ChangeNodePowerState(ctx, n, tc.target, tc.timeout)
		if class, code := classOf(err); class != "InvalidParameterValue" || code != http.StatusBadRequest || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s (timeout %d): %v (%s %d), want 400 starting %q", tc.target, tc.timeout, err, class, code, tc.want)
		}
		if got := h.node(n.UUID); got.TargetPowerState != nil || got.Reservation != nil || got.PowerState != nil {
			t.Errorf("%s refused, yet the node changed: target %v reservation %v power %v", tc.target, deref(got.TargetPowerState), deref(got.Reservation), deref(got.PowerState))
		}
	}
	if err := h.api.ChangeNodePowerState(ctx, n, "rebooting", 0); err != nil {
		t.Fatal(err)
	}
	got := h.waitFor(n.UUID, "power on", func(n *objects.Node) bool { return n.TargetPowerState == nil && n.Reservation == nil })
	if deref(got.PowerState) != string(plugins.PowerOn) || got.LastError != nil {
		t.Errorf("hard reboot through power 1: power %v last_error %v", deref(got.PowerState), deref(got.LastError))
	}
}
