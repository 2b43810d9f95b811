package conductor

import (
	"context"
	"testing"

	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
)

// lookupToken has the conductor issue n's agent token, as the REST API's
// lookup does, and returns it.
func (h *harness) lookupToken(n *objects.Node) string {
	h.t.Helper()
	got, err := h.api.GetNodeWithToken(context.Background(), n)
	if err != nil {
		h.t.Fatalf("get_node_with_token: %v", err)
	}
	token := agenttoken.Stored(got.DriverInternalInfo)
	if token == "" || token == agenttoken.Masked {
		h.t.Fatalf("no token issued: %q", token)
	}
	return token
}

// waitingNode deploys a node that waits for its agent.
func (h *harness) waitingNode(name string) *objects.Node {
	h.t.Helper()
	ctx := context.Background()
	n := h.available(name)
	n.InstanceInfo = map[string]any{AgentCallbackKey: true}
	if _, err := h.api.UpdateNode(ctx, n); err != nil {
		h.t.Fatal(err)
	}
	if err := h.api.DoNodeDeploy(ctx, n, false, nil); err != nil {
		h.t.Fatal(err)
	}
	return h.waitState(n.UUID, "wait call-back")
}

// No heartbeat without the node's token changes anything: the node stays
// in wait call-back with no agent_url, whatever the digest sent.
func TestHeartbeatWithoutValidTokenChangesNothing(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.waitingNode("node-1")
	// Before any token was issued, nothing matches, not even "".
	for _, d := range []string{"", agenttoken.Digest(""), agenttoken.Digest(agenttoken.Masked)} {
		if class, code := classOf(h.api.Heartbeat(ctx, n, "http://10.0.0.5:9999", "9", d)); class != "InvalidParameterValue" || code != 400 {
			t.Fatalf("heartbeat before any token (digest %q): %s %d", d, class, code)
		}
	}
	token := h.lookupToken(n)
	for name, d := range map[string]string{
		"none": "", "of another token": agenttoken.Digest(agenttoken.New()), "of the masked value": agenttoken.Digest(agenttoken.Masked),
		"the token itself": token, "of the token, upper case": "X" + agenttoken.Digest(token)[1:],
	} {
		err := h.api.Heartbeat(ctx, n, "http://10.0.0.5:9999", "9", d)
		if class, code := classOf(err); class != "InvalidParameterValue" || code != 400 {
			t.Fatalf("digest %s: %v", name, err)
		}
	}
	got := h.node(n.UUID)
	if got.ProvisionState != "wait call-back" || got.DriverInternalInfo["agent_url"] != nil || got.Reservation != nil {
		t.Fatalf("a refused heartbeat changed the node: %s %v reservation %v", got.ProvisionState, got.DriverInternalInfo, got.Reservation)
	}
	if agenttoken.Stored(got.DriverInternalInfo) != token {
		t.Fatal("a refused heartbeat changed the token")
	}
}

// The token is issued once: a second get_node_with_token answers it
// masked and keeps the first; a node outside the agent states gets none.
func TestGetNodeWithToken(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	idle := h.available("idle")
	got, err := h.api.GetNodeWithToken(ctx, idle)
	if err != nil || agenttoken.Present(got.DriverInternalInfo) || agenttoken.Present(h.node(idle.UUID).DriverInternalInfo) {
		t.Fatalf("available node: %v, token issued %v", err, agenttoken.Present(h.node(idle.UUID).DriverInternalInfo))
	}
	n := h.waitingNode("node-1")
	token := h.lookupToken(n)
	again, err := h.api.GetNodeWithToken(ctx, n)
	if err != nil || agenttoken.Stored(again.DriverInternalInfo) != agenttoken.Masked {
		t.Fatalf("second issue: %v, %q", err, agenttoken.Stored(again.DriverInternalInfo))
	}
	if agenttoken.Stored(h.node(n.UUID).DriverInternalInfo) != token {
		t.Fatal("the second request replaced the token")
	}
	if h.lookupTokenOther(n, agenttoken.New()) {
		t.Fatal("another token accepted")
	}
}

// lookupTokenOther reports whether a heartbeat with token is accepted.
func (h *harness) lookupTokenOther(n *objects.Node, token string) bool {
	return h.api.Heartbeat(context.Background(), n, "http://10.0.0.5:9999", "9", agenttoken.Digest(token)) == nil
}

// The token dies with the agent's run: a power off or reboot by the
// conductor, and the end (or failure) of the operation, wipe it.
func TestAgentTokenWiped(t *testing.T) {
	ctx := context.Background()
	tests := map[string]func(h *harness, n *objects.Node) *objects.Node{
		"power off": func(h *harness, n *objects.Node) *objects.Node {
			if err := h.api.ChangeNodePowerState(ctx, n, "power off", 0); err != nil {
				t.Fatal(err)
			}
			return h.waitFor(n.UUID, "powered off", func(n *objects.Node) bool { return n.Reservation == nil && n.TargetPowerState == nil })
		},
		"reboot": func(h *harness, n *objects.Node) *objects.Node {
			if err := h.api.ChangeNodePowerState(ctx, n, "rebooting", 0); err != nil {
				t.Fatal(err)
			}
			return h.waitFor(n.UUID, "rebooted", func(n *objects.Node) bool { return n.Reservation == nil && n.TargetPowerState == nil })
		},
		"abort": func(h *harness, n *objects.Node) *objects.Node {
			if err := h.api.DoProvisioningAction(ctx, n, "abort"); err != nil {
				t.Fatal(err)
			}
			return h.waitState(n.UUID, "deploy failed")
		},
		"deploy done": func(h *harness, n *objects.Node) *objects.Node {
			if err := h.api.Heartbeat(ctx, n, "http://10.0.0.5:9999", "9", agenttoken.Digest(agenttoken.Stored(h.node(n.UUID).DriverInternalInfo))); err != nil {
				t.Fatal(err)
			}
			return h.waitState(n.UUID, "active")
		},
	}
	for name, act := range tests {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil, "cond-a", nil)
			n := h.waitingNode("node-1")
			token := h.lookupToken(n)
			got := act(h, n)
			if agenttoken.Present(got.DriverInternalInfo) {
				t.Fatalf("token kept: %v", got.DriverInternalInfo)
			}
			if h.lookupTokenOther(n, token) {
				t.Fatal("the old token still heartbeats")
			}
		})
	}
}

// A heartbeat's agent_verify_ca (RPC 1.5) is kept in driver_internal_info
// for the agent client, agent_version as before (a node in clean wait: it
// stays waiting).
func TestHeartbeatKeepsAgentVerifyCA(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	n := h.available("node-1")
	n.ProvisionState = "clean wait"
	if err := h.store.Save(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	token := h.lookupToken(n)
	const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	if err := h.api.Heartbeat(context.Background(), n, "https://10.0.0.5:9999", "9.14.1", agenttoken.Digest(token),
		rpc.HeartbeatExtra{VerifyCA: ca, Status: "start"}); err != nil {
		t.Fatal(err)
	}
	dii := h.node(n.UUID).DriverInternalInfo
	if dii[agentVerifyCAKey] != ca || dii["agent_version"] != "9.14.1" || dii["agent_url"] != "https://10.0.0.5:9999" {
		t.Fatalf("driver_internal_info: %v", dii)
	}
}
