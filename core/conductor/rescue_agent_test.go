package conductor

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/rivetmetal/rivet/core/conductor/agentclient/agenttest"
	"github.com/rivetmetal/rivet/core/objects"
)

// agentRescueNode is an active fake-hardware node with the agent rescue
// interface.
func (h *harness) agentRescueNode(name string) *objects.Node {
	h.t.Helper()
	n := h.active(name)
	for _, change := range []func(n *objects.Node){
		func(n *objects.Node) { n.RescueInterface, n.Maintenance = ptr(AgentRescue), true },
		func(n *objects.Node) { n.Maintenance = false },
	} {
		if err := h.update(n.UUID, change); err != nil {
			h.t.Fatal(err)
		}
	}
	return h.node(n.UUID)
}

// Rescue through the agent: the conductor boots the rescue ramdisk and
// waits in "rescue wait"; on the agent's heartbeat it sends
// rescue.finalize_rescue with the password hashed as Ironic hashes it
// (SHA-crypt, never the password itself) and the node is in "rescue";
// unrescue boots the instance from disk again, without the passwords.
func TestAgentRescue(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.agentRescueNode("node-1")
	if err := h.api.DoNodeRescue(ctx, n, "s3cret-pw"); err != nil {
		t.Fatal(err)
	}
	waiting := h.waitState(n.UUID, "rescue wait")
	hashed, _ := waiting.InstanceInfo[hashedRescuePasswordKey].(string)
	if !strings.HasPrefix(hashed, "$5$") {
		t.Fatalf("hashed_rescue_password %q", hashed)
	}
	if _, booted := h.hw.Cleaned(n.UUID); !booted {
		t.Error("the rescue ramdisk was not booted")
	}
	a := agenttest.New()
	var mu sync.Mutex
	var got map[string]any
	a.Handle(cmdFinalizeRescue, func(_ context.Context, p map[string]any) (map[string]any, error) {
		mu.Lock()
		defer mu.Unlock()
		got = p
		return nil, nil
	})
	rescued := h.heartbeatUntil(n, h.agentFor(n, a), "rescue")
	mu.Lock()
	sent := got
	mu.Unlock()
	if sent["rescue_password"] != hashed || sent["hashed"] != true {
		t.Errorf("finalize_rescue params %v, want the hash %q", sent, hashed)
	}
	want, err := shaCrypt("s3cret-pw", strings.Split(hashed, "$")[2], "sha256")
	if err != nil || want != hashed {
		t.Errorf("the hash is not SHA-crypt of the password: %q, %v", want, err)
	}
	if rescued.LastError != nil || rescued.DriverInternalInfo["agent_url"] != nil {
		t.Errorf("rescued: last_error %v, agent_url %v", deref(rescued.LastError), rescued.DriverInternalInfo["agent_url"])
	}

	if err := h.api.DoNodeUnrescue(ctx, rescued); err != nil {
		t.Fatal(err)
	}
	back := h.waitState(n.UUID, "active")
	for _, k := range rescuePasswordKeys {
		if _, ok := back.InstanceInfo[k]; ok {
			t.Errorf("unrescue kept instance_info %s", k)
		}
	}
	if dev, err := h.hw.GetBootDevice(ctx, pluginNode(back)); err != nil || dev.Device != "disk" || deref(back.PowerState) != "power on" {
		t.Errorf("after unrescue: boot %+v %v, power %v", dev, err, deref(back.PowerState))
	}
}

// An agent that cannot finalize the rescue fails it: rescue failed, the
// agent's error in last_error, the passwords gone.
func TestAgentRescueFailure(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.agentRescueNode("node-1")
	if err := h.api.DoNodeRescue(ctx, n, "pw"); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "rescue wait")
	a := agenttest.New()
	a.Handle(cmdFinalizeRescue, func(context.Context, map[string]any) (map[string]any, error) {
		return nil, errNoRescueUser
	})
	got := h.heartbeatUntil(n, h.agentFor(n, a), "rescue failed")
	if msg := deref(got.LastError); !strings.Contains(msg, "finalize rescue") || !strings.Contains(msg, "no rescue user") {
		t.Errorf("last_error %q", msg)
	}
	for _, k := range rescuePasswordKeys {
		if _, ok := got.InstanceInfo[k]; ok {
			t.Errorf("failed rescue kept instance_info %s", k)
		}
	}
}

var errNoRescueUser = &rescueTestError{"no rescue user in this ramdisk"}

type rescueTestError struct{ s string }

func (e *rescueTestError) Error() string { return e.s }

// A node without a rescue image in driver_info cannot be rescued through
// the agent: 400 InstanceRescueFailure naming the keys, nothing changed.
func TestAgentRescueValidation(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil, "ipmi") // ipmi served by the fake: the check is the conductor's
	ctx := context.Background()
	n := h.agentRescueNode("node-1")
	row := h.node(n.UUID)
	row.Driver, row.DriverInfo = "ipmi", map[string]any{"ipmi_address": "10.0.0.9", "deploy_kernel": "k", "deploy_ramdisk": "r"}
	if err := h.store.Save(ctx, row); err != nil {
		t.Fatal(err)
	}
	err := h.api.DoNodeRescue(ctx, row, "pw")
	if c, k := classOf(err); c != "InstanceRescueFailure" || k != 400 || !strings.Contains(err.Error(), "rescue_kernel and rescue_ramdisk") {
		t.Fatalf("rescue without a rescue image: %v (%s %d)", err, c, k)
	}
	if got := h.node(n.UUID); got.ProvisionState != "active" || got.InstanceInfo["rescue_password"] != nil {
		t.Errorf("refused rescue changed the node: %s %v", got.ProvisionState, got.InstanceInfo)
	}
}
