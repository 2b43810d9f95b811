package conductor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// registerPeer records another conductor; stale makes its heartbeat older
// than any timeout the tests use.
func registerPeer(t *testing.T, dbh *db.DB, host string, drivers []string, stale bool) {
	t.Helper()
	ctx := context.Background()
	if _, err := dbh.RegisterConductor(ctx, db.ConductorRegistration{Hostname: host, Drivers: drivers, Version: "1.0"}); err != nil {
		t.Fatal(err)
	}
	if stale {
		now, _ := dbh.Now(ctx)
		if _, err := dbh.Bun().NewUpdate().Table(db.TableConductors).Set("updated_at = ?", now.Add(-time.Hour)).
			Where("? = ?", bun.Ident("hostname"), host).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// The takeover periodic on every dialect: leases of dead conductors are
// taken over and transient states fail with last_error; leases of live
// conductors and of this conductor are left alone, unless this
// conductor's own lease expired with no task of its holding it (a release
// that failed while the database was down); active nodes deployed
// elsewhere are re-adopted.
func TestTakeover(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		h := newHarness(t, dbtest.Open(t, d), "cond-b", nil)
		registerPeer(t, h.dbh, "dead-a", []string{"fake-hardware"}, true)
		// live-c is alive but serves another hardware type, so the ring
		// for fake-hardware maps every node to cond-b.
		registerPeer(t, h.dbh, "live-c", []string{"ipmi"}, false)
		other := int64(999)

		type want struct {
			state, holder, lastError string
			affinity                 *int64
			targetPower              bool
		}
		self := h.svc.conductorID.Load()
		tests := map[string]struct {
			state       string
			holder      string
			expired     bool // the lease expired (a release that failed)
			affinity    *int64
			targetPower bool
			want        want
		}{
			"deploying under a dead lease fails": {state: "deploying", holder: "dead-a",
				want: want{state: "deploy failed", lastError: "lease of conductor dead-a, which is no longer alive"}},
			"cleaning under a dead lease fails": {state: "cleaning", holder: "dead-a",
				want: want{state: "clean failed", lastError: "dead-a"}},
			"deleting under a dead lease goes to error": {state: "deleting", holder: "dead-a",
				want: want{state: "error", lastError: "dead-a"}},
			"verifying left without a lease goes back to enroll": {state: "verifying",
				want: want{state: "enroll", lastError: "with no conductor working on it"}},
			"live holder keeps its node": {state: "deploying", holder: "live-c",
				want: want{state: "deploying", holder: "live-c"}},
			"own lease is never taken over": {state: "deploying", holder: "cond-b",
				want: want{state: "deploying", holder: "cond-b"}},
			"own expired lease no task holds is recovered": {state: "deploying", holder: "cond-b", expired: true,
				want: want{state: "deploy failed", lastError: "expired lease of its own"}},
			"own expired lease with a target power state is recovered": {state: "available", holder: "cond-b", expired: true, targetPower: true,
				want: want{state: "available", lastError: `Power action "power on"`}},
			"active node of a dead conductor is re-adopted": {state: "active", holder: "dead-a", affinity: &other,
				want: want{state: "active", affinity: &self}},
			"stale target power state is cleared, and said": {state: "available", targetPower: true,
				want: want{state: "available", lastError: "was interrupted"}},
		}
		nodes := map[string]*objects.Node{}
		for name, tc := range tests {
			n := newNode(t, h.store, tc.state)
			n.ConductorAffinity = tc.affinity
			if tc.targetPower {
				n.TargetPowerState = ptr("power on")
			}
			if err := h.store.Save(ctx, n); err != nil {
				t.Fatal(err)
			}
			if tc.holder != "" {
				ttl := time.Hour
				if tc.expired {
					ttl = time.Millisecond
				}
				if _, err := h.dbh.AcquireLease(ctx, n.UUID, tc.holder, ttl); err != nil {
					t.Fatal(err)
				}
			}
			nodes[name] = n
		}
		// Setting up took a while on a loaded machine: live-c heartbeats
		// now, so it is alive when the periodic looks.
		// The same for this conductor (cond-b) itself: the hash ring only
		// maps nodes to live conductors.
		for _, host := range []string{"live-c", "cond-b"} {
			if err := h.dbh.TouchConductor(ctx, host, true); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(20 * time.Millisecond) // the expired leases are past their end
		if got := h.svc.checkOrphans(ctx); got != 8 {
			t.Errorf("checkOrphans recovered %d nodes, want 8", got)
		}
		for name, tc := range tests {
			t.Run(name, func(t *testing.T) {
				got := h.node(nodes[name].UUID)
				if got.ProvisionState != tc.want.state || deref(got.Reservation) != tc.want.holder {
					t.Fatalf("state %q holder %q, want %q %q", got.ProvisionState, deref(got.Reservation), tc.want.state, tc.want.holder)
				}
				if !strings.Contains(deref(got.LastError), tc.want.lastError) || (tc.want.lastError == "") != (got.LastError == nil) {
					t.Fatalf("last_error %q, want it to mention %q", deref(got.LastError), tc.want.lastError)
				}
				if tc.want.affinity != nil && (got.ConductorAffinity == nil || *got.ConductorAffinity != *tc.want.affinity) {
					t.Fatalf("conductor_affinity %v, want %d", got.ConductorAffinity, *tc.want.affinity)
				}
				if got.TargetPowerState != nil || got.TargetProvisionState != nil && tc.want.holder == "" {
					t.Fatalf("targets left: power %v provision %v", deref(got.TargetPowerState), deref(got.TargetProvisionState))
				}
			})
		}
		if h.svc.tasks.Held() != 0 {
			t.Fatalf("takeover left %d leases held", h.svc.tasks.Held())
		}
	})
}

// Graceful stop: a deploy in flight finishes, new calls are refused with a
// 503-class error meanwhile, the conductor is offline and holds no lease.
func TestGracefulStop(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.enroll("node-1")
	h.makeAvailable(n)
	h.waitState(n.UUID, "available")
	gate := make(chan struct{})
	h.hw.set(func(f *hookedFake) { f.gate = gate })
	if err := h.api.DoNodeDeploy(ctx, n, false, nil); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- h.svc.Stop(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for !h.svc.refusing.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	err := h.api.ChangeNodePowerState(ctx, n, "power on", 0)
	if class, code := classOf(err); class != "TemporaryFailure" || code != 503 {
		t.Fatalf("call while draining: %v (%s %d), want TemporaryFailure 503", err, class, code)
	}
	// Stop sets draining, then takes the conductor out of the ring: it must
	// leave the ring while its deploy is still held at the gate.
	live, _ := h.dbh.LiveConductors(ctx, time.Minute)
	for len(live) != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		live, _ = h.dbh.LiveConductors(ctx, time.Minute)
	}
	if len(live) != 0 {
		t.Fatalf("draining conductor still in the ring: %+v", live)
	}
	close(gate)
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
	got := h.node(n.UUID)
	if got.ProvisionState != "active" || got.Reservation != nil {
		t.Fatalf("after graceful stop: state %q holder %v", got.ProvisionState, deref(got.Reservation))
	}
}

// Stop past graceful_shutdown_timeout: the work is cancelled, the node
// fails with last_error naming the shutdown, and no lease is left.
func TestStopTimeoutFailsWork(t *testing.T) {
	h := newHarness(t, nil, "cond-a", func(c *Config) { c.GracefulShutdownTimeout = 100 * time.Millisecond })
	ctx := context.Background()
	n := h.enroll("node-1")
	h.makeAvailable(n)
	h.waitState(n.UUID, "available")
	h.hw.set(func(f *hookedFake) { f.gate = make(chan struct{}) })
	if err := h.api.DoNodeDeploy(ctx, n, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.svc.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	got := h.node(n.UUID)
	if got.ProvisionState != "deploy failed" || got.Reservation != nil || !strings.Contains(deref(got.LastError), "shut down before the operation finished") {
		t.Fatalf("state %q holder %v last_error %q", got.ProvisionState, deref(got.Reservation), deref(got.LastError))
	}
}

// With every worker busy, a new long-running call is refused at once with
// NoFreeConductorWorker (503) and changes nothing.
func TestNoFreeWorker(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil) // 4 workers
	ctx := context.Background()
	h.hw.set(func(f *hookedFake) { f.gate = make(chan struct{}) })
	var ns []*objects.Node
	for i := range 5 {
		n := h.enroll("node-" + string(rune('a'+i)))
		h.makeAvailable(n)
		h.waitState(n.UUID, "available")
		ns = append(ns, n)
	}
	for _, n := range ns[:4] {
		if err := h.api.DoNodeDeploy(ctx, n, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	err := h.api.DoNodeDeploy(ctx, ns[4], false, nil)
	if class, code := classOf(err); class != "NoFreeConductorWorker" || code != 503 {
		t.Fatalf("deploy with no free worker: %v (%s %d)", err, class, code)
	}
	if got := h.node(ns[4].UUID); got.ProvisionState != "available" || got.Reservation != nil {
		t.Fatalf("refused deploy changed the node: %q %v", got.ProvisionState, deref(got.Reservation))
	}
}
