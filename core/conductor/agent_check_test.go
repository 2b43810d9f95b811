package conductor

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/conductor/agentclient"
	"github.com/rivetmetal/rivet/core/conductor/agentclient/agenttest"
	"github.com/rivetmetal/rivet/core/conductor/workers"
	"github.com/rivetmetal/rivet/core/objects"
)

// The heartbeats of an agent running a deploy step's command need no
// worker: with every worker busy they are recorded and answered (Ironic,
// and Rivet before, answered 503 "no free worker"). The heartbeat that
// finds the command ended waits for a worker instead of being refused,
// and the deploy goes on once one is free, without another heartbeat.
func TestHeartbeatWhileCommandRunsNeedsNoWorker(t *testing.T) {
	h := newHarness(t, nil, "cond-a", func(c *Config) { c.Workers = workers.Config{Size: 2, ReservedForAPI: 1} })
	ctx := context.Background()
	n, _, beat, written := h.writingImage()

	// Hold every worker. One may still be ending the task that started
	// write_image (it released the lease before it returned): wait for
	// it rather than hold fewer, or the deploy would go on on it.
	busy := make(chan struct{})
	defer func() {
		select {
		case <-busy:
		default:
			close(busy)
		}
	}()
	for held, deadline := 0, time.Now().Add(10*time.Second); held < h.svc.cfg.Workers.Size; {
		if err := h.svc.pool.TryAPI(func() { <-busy }); err == nil {
			held++
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("held %d of %d workers: the others stayed busy", held, h.svc.cfg.Workers.Size)
		}
		time.Sleep(time.Millisecond)
	}
	for i := range 3 {
		if err := beat(); err != nil {
			t.Fatalf("heartbeat %d with every worker busy: %v", i, err)
		}
	}
	if got := h.node(n.UUID); got.DriverInternalInfo["agent_url"] == nil || got.DriverInternalInfo["agent_last_heartbeat"] == nil {
		t.Fatalf("heartbeat not recorded: %v", got.DriverInternalInfo)
	}

	written()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		last, err := h.svc.agent.Last(ctx, agentTarget(h.node(n.UUID)), "deploy.execute_deploy_step")
		if err == nil && last != nil && last.Status != agentclient.StatusRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("write_image never ended: %+v, %v", last, err)
		}
	}
	if err := beat(); err != nil { // the command ended: the deploy waits for a worker
		t.Fatalf("heartbeat after the command ended: %v", err)
	}
	close(busy)
	if got := h.waitState(n.UUID, "active"); got.LastError != nil {
		t.Errorf("last_error %v", *got.LastError)
	}
}

// A waiting node's heartbeat touches provision_updated_at (Ironic's
// touch_provisioning): deploy_callback_timeout counts from the agent's
// last heartbeat, so a step longer than the timeout does not fail while
// its agent keeps reporting.
func TestHeartbeatPostponesCallbackTimeout(t *testing.T) {
	h := newHarness(t, nil, "cond-a", func(c *Config) { c.DeployCallbackTimeout = time.Hour })
	ctx := context.Background()
	n, _, beat, _ := h.writingImage()
	// The node has waited two hours by its provision_updated_at.
	old := time.Now().Add(-2 * time.Hour).UTC()
	if _, err := h.dbh.Bun().NewUpdate().Table("nodes").Set("provision_updated_at = ?", old).Where("uuid = ?", n.UUID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := beat(); err != nil {
		t.Fatal(err)
	}
	got := h.node(n.UUID)
	if got.ProvisionUpdatedAt == nil || time.Since(*got.ProvisionUpdatedAt) > time.Minute {
		t.Fatalf("provision_updated_at after a heartbeat = %v, want now", got.ProvisionUpdatedAt)
	}
	if recovered := h.svc.checkOrphans(ctx); recovered != 0 {
		t.Fatalf("checkOrphans failed %d nodes whose agent just heartbeat", recovered)
	}
	if got := h.node(n.UUID); got.ProvisionState != "wait call-back" {
		t.Fatalf("provision_state %q, want wait call-back", got.ProvisionState)
	}
}

// Stop waits for the heartbeats' follow-ups: one asking the agent about
// its command when the conductor stops is cancelled and has ended when
// Stop returns, and a heartbeat answered after that starts none.
func TestStopWaitsForAgentFollowUps(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n, a, beat, _ := h.writingImage()
	checking := make(chan struct{}, 1)
	a.BeforeStatus = func(r *http.Request) {
		select {
		case checking <- struct{}{}:
		default:
		}
		<-r.Context().Done() // held until the conductor gives up asking
		time.Sleep(50 * time.Millisecond)
	}
	if err := beat(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-checking:
	case <-time.After(10 * time.Second):
		t.Fatal("the heartbeat's follow-up never asked the agent")
	}
	if err := h.svc.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.svc.followingUp(); got != 0 {
		t.Fatalf("%d follow-ups still running after Stop", got)
	}
	h.svc.followUp(h.node(n.UUID))
	if got := h.svc.followingUp(); got != 0 {
		t.Fatalf("a follow-up started after Stop (%d running)", got)
	}
}

// writingImage takes a direct-deploy node to "wait call-back" with its
// agent running write_image, which runs until release is called (or the
// test ends): the agent, its heartbeat and release.
func (h *harness) writingImage() (n *objects.Node, a *agenttest.Agent, beat func() error, release func()) {
	h.t.Helper()
	n = h.directNode("node-1", nil)
	if err := h.api.DoNodeDeploy(context.Background(), n, false, nil); err != nil {
		h.t.Fatal(err)
	}
	h.waitState(n.UUID, "wait call-back")
	a = agenttest.New()
	done := make(chan struct{})
	release = sync.OnceFunc(func() { close(done) })
	h.t.Cleanup(release)
	a.Handle("deploy.execute_deploy_step", func(ctx context.Context, _ map[string]any) (map[string]any, error) {
		select {
		case <-done:
		case <-ctx.Done():
		}
		return nil, nil
	})
	beat = h.agentFor(n, a)
	if err := beat(); err != nil { // the agent booted: write_image starts
		h.t.Fatal(err)
	}
	h.waitFor(n.UUID, "write_image running", func(got *objects.Node) bool {
		return got.ProvisionState == "wait call-back" && got.Reservation == nil && got.DriverInternalInfo[diiAgentCommand] != nil
	})
	return n, a, beat, release
}
