package conductor

import (
	"context"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/clock"
	"github.com/rivetmetal/rivet/core/objects"
)

// clockSkew is far beyond every lease margin (lease_duration 3 s,
// heartbeat_timeout 3 s): a conductor judging leases or liveness by its
// own clock would take over at once.
const clockSkew = 30 * time.Second

// Conductors whose clocks disagree by a minute agree on leases and
// liveness, which come from the database's clock. Conductor a (clock
// 30 s behind) deploys nodes under leases; b (30 s ahead) joins, so the
// ring hands it some of them while a still works on them: b takes none
// of them over (no double ownership). Then a is killed: b takes its share
// over only once a's heartbeat is really older than heartbeat_timeout (no
// premature takeover).
func TestClockSkewBetweenConductors(t *testing.T) {
	c := newCluster(t)
	a := c.startEnv("a", clock.SkewEnv+"=-"+clockSkew.String())
	ctx := context.Background()
	var nodes []*objects.Node
	for i := range 10 {
		n := c.available("skew-"+string(rune('a'+i)), map[string]any{"fake_deploy_delay": 600})
		if err := c.api.DoNodeDeploy(ctx, n, false, nil); err != nil {
			t.Fatalf("deploy %s: %v", n.UUID, err)
		}
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		if got := c.node(n.UUID); got.ProvisionState != "deploying" || deref(got.Reservation) != a.name {
			t.Fatalf("node %s: %q held by %q, want deploying under a's lease", n.UUID, got.ProvisionState, deref(got.Reservation))
		}
	}

	b := c.startEnv("b", clock.SkewEnv+"="+clockSkew.String())
	var moved []*objects.Node // the ring maps these to b now, while a holds them
	for _, n := range nodes {
		if c.owner(n.UUID) == b.name {
			moved = append(moved, n)
		}
	}
	if len(moved) == 0 {
		t.Fatalf("the ring gave b none of the %d nodes; nothing to test", len(nodes))
	}
	if !strings.Contains(a.log.String(), "TEST ONLY: this process's wall clock is skewed") {
		t.Fatal("conductor a does not report its skewed clock")
	}
	// b runs a takeover check every second: give it several.
	end := time.Now().Add(heartbeatTimeout + 3*checkInterval)
	for time.Now().Before(end) {
		for _, n := range nodes {
			if got := c.node(n.UUID); got.ProvisionState != "deploying" || deref(got.Reservation) != a.name {
				t.Fatalf("node %s became %q held by %q while a was alive and working on it (last_error %q)",
					n.UUID, got.ProvisionState, deref(got.Reservation), deref(got.LastError))
			}
		}
		time.Sleep(100 * time.Millisecond)
	}

	a.signal(t, syscall.SIGKILL)
	killed := time.Now()
	<-a.done
	took := c.waitUntil(heartbeatTimeout+3*checkInterval+10*time.Second, "b taking over its share", func() bool {
		return slices.ContainsFunc(moved, func(n *objects.Node) bool { return c.node(n.UUID).ProvisionState == "deploy failed" })
	})
	// a heartbeated at most heartbeat_interval (1 s) before the kill, so it
	// was alive by the database's clock for at least 2 s after it.
	if earliest := heartbeatTimeout - time.Second - 200*time.Millisecond; took < earliest {
		t.Fatalf("b took over %v after a died, before a's heartbeat (timeout %v) had expired", took, heartbeatTimeout)
	}
	t.Logf("b took over %v after a was killed (heartbeat_timeout %v); kill at %s", took, heartbeatTimeout, killed.Format(time.TimeOnly))
	for _, n := range moved {
		c.waitUntil(3*checkInterval+5*time.Second, "recovery of "+n.UUID, func() bool {
			got := c.node(n.UUID)
			return got.ProvisionState == "deploy failed" && got.Reservation == nil
		})
		if le := deref(c.node(n.UUID).LastError); !strings.Contains(le, a.name) {
			t.Errorf("node %s: last_error %q does not name the dead conductor", n.UUID, le)
		}
	}
}
