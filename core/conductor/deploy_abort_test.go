package conductor

import (
	"context"
	"testing"

	"github.com/rivetmetal/rivet/core/conductor/agentclient/agenttest"
)

// Abort from wait call-back (API 1.110) while the agent boots: the step
// "deploy" is not abortable, so the abort is recorded (abort_after) and the
// node keeps waiting; the agent's heartbeat ends the step, and the deploy
// is aborted then: deploy failed, powered off, with Ironic's last_error,
// no deploy_step and no agent URL; the agent is never sent a command.
func TestDeployWaitAbortAfterStep(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.directNode("node-1", nil)
	if err := h.api.DoNodeDeploy(ctx, n, false, nil); err != nil {
		t.Fatal(err)
	}
	waiting := h.waitState(n.UUID, "wait call-back")
	if waiting.DeployStep["step"] != "deploy" {
		t.Fatalf("deploy_step while the agent boots: %v", waiting.DeployStep)
	}
	a := agenttest.New()
	beat := h.agentFor(n, a)
	if err := h.api.DoProvisioningAction(ctx, n, "abort"); err != nil {
		t.Fatal(err)
	}
	got := h.node(n.UUID)
	if got.ProvisionState != "wait call-back" || got.DeployStep["abort_after"] != true {
		t.Fatalf("after abort: %s, deploy_step %v", got.ProvisionState, got.DeployStep)
	}
	// A second abort changes nothing.
	if err := h.api.DoProvisioningAction(ctx, n, "abort"); err != nil {
		t.Fatal(err)
	}
	got = h.heartbeatUntil(n, beat, "deploy failed")
	want := `By request, the deploy operation was aborted during or after the completion of step "deploy.deploy"`
	if deref(got.LastError) != want {
		t.Errorf("last_error %q, want %q", deref(got.LastError), want)
	}
	if len(got.DeployStep) != 0 || got.DriverInternalInfo["agent_url"] != nil || got.DriverInternalInfo[diiDeploySteps] != nil {
		t.Errorf("deploy_step %v, driver_internal_info %v", got.DeployStep, got.DriverInternalInfo)
	}
	if deref(got.PowerState) != "power off" || got.Reservation != nil {
		t.Errorf("power %v, reservation %v", deref(got.PowerState), got.Reservation)
	}
	if rec := a.Received(); len(rec) != 0 {
		t.Errorf("agent was sent %v after the abort", rec)
	}
}

// A node waiting without a deploy step (a driver's own agent callback) is
// aborted at once: deploy failed, last_error without a step.
func TestDeployWaitAbortWithoutStep(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.waitingNode("node-1")
	if err := h.api.DoProvisioningAction(ctx, n, "abort"); err != nil {
		t.Fatal(err)
	}
	got := h.waitState(n.UUID, "deploy failed")
	if deref(got.LastError) != "By request, the deploy operation was aborted" {
		t.Errorf("last_error %q", deref(got.LastError))
	}
}
