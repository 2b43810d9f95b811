package conductor

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
)

// manageableDirect is a manageable fake-hardware node with the direct
// deploy.
func (h *harness) manageableDirect(name string) *objects.Node {
	h.t.Helper()
	n := h.directNode(name, nil)
	if err := h.api.DoProvisioningAction(context.Background(), n, "manage"); err != nil {
		h.t.Fatal(err)
	}
	return h.waitState(n.UUID, "manageable")
}

// Manual cleaning with disable_ramdisk (API 1.70, RPC 1.5) runs the
// driver's out-of-band steps without booting the agent: the node goes
// from cleaning straight back to manageable, no heartbeat needed, the
// deploy ramdisk never booted, the node not powered off.
func TestCleanDisableRamdisk(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.manageableDirect("node-1")
	if err := h.api.DoNodeClean(ctx, n, []map[string]any{{"interface": "management", "step": "reset_bmc"}}, true); err != nil {
		t.Fatal(err)
	}
	got := h.waitState(n.UUID, "manageable")
	steps, booted := h.hw.Cleaned(n.UUID)
	if !slices.Equal(steps, []string{"reset_bmc"}) || booted {
		t.Errorf("steps run %v, ramdisk booted %v", steps, booted)
	}
	if got.LastError != nil || len(got.CleanStep) != 0 {
		t.Errorf("last_error %v, clean_step %v", deref(got.LastError), got.CleanStep)
	}
	for _, k := range cleanKeys {
		if _, ok := got.DriverInternalInfo[k]; ok {
			t.Errorf("driver_internal_info keeps %s", k)
		}
	}
}

// A step the agent runs (the deploy interface's) requires the ramdisk:
// with disable_ramdisk cleaning fails before anything runs, with Ironic's
// message; the same step without disable_ramdisk boots the agent.
func TestCleanDisableRamdiskRefusesAgentSteps(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.manageableDirect("node-1")
	steps := []map[string]any{{"interface": "management", "step": "reset_bmc"},
		{"interface": "deploy", "step": "erase_devices_metadata"}}
	if err := h.api.DoNodeClean(ctx, n, steps, true); err != nil {
		t.Fatal(err)
	}
	got := h.waitState(n.UUID, "clean failed")
	want := "Cannot clean node " + n.UUID + ": clean step {'interface': 'deploy', 'step': 'erase_devices_metadata', 'args': {}} requires booting a ramdisk"
	if deref(got.LastError) != want {
		t.Errorf("last_error %q\nwant %q", deref(got.LastError), want)
	}
	if ran, booted := h.hw.Cleaned(n.UUID); len(ran) != 0 || booted {
		t.Errorf("ran %v, booted %v", ran, booted)
	}

	n2 := h.manageableDirect("node-2")
	if err := h.api.DoNodeClean(ctx, n2, steps[1:], false); err != nil {
		t.Fatal(err)
	}
	h.waitState(n2.UUID, "clean wait")
	a, ran := cleanAgent(nil)
	h.heartbeatUntil(n2, h.agentFor(n2, a), "manageable")
	if !slices.Equal(ran(), []string{"erase_devices_metadata"}) {
		t.Errorf("agent ran %v", ran())
	}
}

// disable_ramdisk is RPC 1.5's: a client capped at 1.4 (pinned to release
// 0.2) refuses it before sending anything, and the node stays manageable;
// manual cleaning without it is still sent.
func TestCleanDisableRamdiskCapped(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	n := h.manageableDirect("node-1")
	api := h.cappedAPI("1.4")
	steps := []map[string]any{{"interface": "management", "step": "reset_bmc"}}
	var ce *rpc.CapError
	if err := api.DoNodeClean(context.Background(), n, steps, true); !errors.As(err, &ce) {
		t.Fatalf("do_node_clean with disable_ramdisk at 1.4: %v, want *rpc.CapError", err)
	}
	if got := h.node(n.UUID); got.ProvisionState != "manageable" {
		t.Errorf("state %s after a refused call", got.ProvisionState)
	}
	if err := api.DoNodeClean(context.Background(), n, steps, false); err != nil {
		t.Errorf("do_node_clean without disable_ramdisk at 1.4: %v", err)
	}
}
