package conductor

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/conductor/agentclient/agenttest"
	"github.com/rivetmetal/rivet/core/conductor/workers"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/drivers/fake"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestAgentDeployScale drives RIVET_AGENT_BENCH (e.g. 1000) concurrent
// direct deploys on one conductor (SQLite, in-process RPC), each node with
// its own fake agent (agenttest, a real HTTP server) that heartbeats as
// IPA does: after boot, then right after its write_image command ends. It
// reports deploys per minute and the conductor process's CPU per
// heartbeat (the heartbeats' share: the whole process's CPU during the
// run, agents included, divided by the heartbeats sent, so an upper
// bound). Skipped unless the variable is set: it is a benchmark.
func TestAgentDeployScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("RIVET_AGENT_BENCH"))
	if n <= 0 {
		t.Skip("set RIVET_AGENT_BENCH=N to run N concurrent agent deploys")
	}
	h := newHarness(t, nil, "cond-a", func(c *Config) {
		c.Workers = workers.Config{Size: 64, ReservedForAPI: 8}
		c.LeaseDuration = 30 * time.Second
		c.LockRetryAttempts, c.LockRetryInterval = 0, 0
	})
	ctx := context.Background()
	nodes := make([]*objects.Node, n)
	for i := range nodes {
		nd := &objects.Node{UUID: uuid.NewString(), Driver: fake.HardwareType, ProvisionState: "available",
			DeployInterface: ptr("direct"),
			InstanceInfo:    map[string]any{"image_source": "http://images.test/disk.raw", "image_checksum": testSHA256}}
		if err := h.store.Create(ctx, nd); err != nil {
			t.Fatal(err)
		}
		nodes[i] = nd
	}
	var beats, refused atomic.Int64
	cpu0, start := cpuTime(), time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, nd := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- deployOne(h, nd, &beats, &refused)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	t.Logf("%d concurrent agent deploys on one conductor: %v wall, %.0f deploys/min; %d heartbeats accepted (%d refused: node busy); process CPU %v, %.2f ms per accepted heartbeat (upper bound: agents and deploy work included)",
		n, wall.Round(time.Millisecond), float64(n)/wall.Minutes(), beats.Load(), refused.Load(), cpu.Round(time.Millisecond),
		float64(cpu.Microseconds())/1000/float64(beats.Load()))
}

// deployOne deploys nd through its own fake agent.
func deployOne(h *harness, nd *objects.Node, beats, refused *atomic.Int64) error {
	ctx := context.Background()
	a := agenttest.New()
	url := a.Start()
	defer a.Close()
	for {
		err := h.api.DoNodeDeploy(ctx, nd, false, nil)
		if err == nil {
			break
		}
		if class, code := classOf(err); class != "NodeLocked" && code != 503 {
			return fmt.Errorf("deploy %s: %w", nd.UUID, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		cur, err := h.store.GetNode(ctx, nd.UUID)
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue // the database is busy: SQLite under this load
		}
		switch cur.ProvisionState {
		case "active":
			return nil
		case "deploy failed":
			return fmt.Errorf("node %s: %s", nd.UUID, deref(cur.LastError))
		case "wait call-back":
			if a.Token == "" {
				got, err := h.api.GetNodeWithToken(ctx, cur)
				if err != nil {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				a.Token = agenttoken.Stored(got.DriverInternalInfo)
			}
			if err := h.api.Heartbeat(ctx, cur, url, "9.14.1", agenttoken.Digest(a.Token)); err != nil {
				refused.Add(1)
			} else {
				beats.Add(1)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("node %s: no active within 10 minutes", nd.UUID)
}
