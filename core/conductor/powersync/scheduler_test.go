package powersync

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rivetmetal/rivet/core/conductor/workers"
)

// A BMC that hangs for 2 s holds one worker; the other nodes all finish
// long before its 500 ms deadline, and the cycle ends at the deadline (or
// the deadline plus abandonGrace when the driver ignores its context), not
// when the hang ends.
func TestSlowBMCDoesNotDelayOthers(t *testing.T) {
	const hang, timeout, fast = 2 * time.Second, 500 * time.Millisecond, 40
	tests := map[string]struct {
		honoursCtx   bool
		wantDuration time.Duration
	}{
		"driver honours its deadline": {honoursCtx: true, wantDuration: timeout},
		"driver ignores its deadline": {honoursCtx: false, wantDuration: timeout + abandonGrace},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := testConfig(4)
				cfg.CallTimeout = timeout
				// "bmc-00000" sorts first: the slow node is dispatched first.
				r := newRig(t, cfg, nodes(fast+1, ownBMC), 10*time.Millisecond, nil)
				slow := "node-00000"
				r.bmcs.custom[slow] = func(ctx context.Context) (string, error) {
					if tc.honoursCtx {
						return "", sleep(ctx, hang)
					}
					time.Sleep(hang)
					return "power on", nil
				}
				start := time.Now()
				st, err := r.s.RunOnce(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for uuid, ends := range r.bmcs.ends {
					if uuid != slow && ends[0].Sub(start) >= timeout/2 {
						t.Errorf("%s finished %v after start, want well before the slow BMC's %v deadline", uuid, ends[0].Sub(start), timeout)
					}
				}
				if st.Duration != tc.wantDuration {
					t.Errorf("cycle took %v, want %v", st.Duration, tc.wantDuration)
				}
				if st.Probed != fast+1 || st.Failed != 1 || len(r.rec.errs) != 1 || !errors.Is(r.rec.errs[0], ErrTimeout) {
					t.Errorf("probed %d failed %d errors %v; want %d probed, 1 failed with ErrTimeout", st.Probed, st.Failed, r.rec.errs, fast+1)
				}
				if tc.honoursCtx {
					return
				}
				// The abandoned probe still runs: its BMC is skipped, not probed twice.
				st, _ = r.s.RunOnce(context.Background())
				if st.Skipped.Busy != 1 || r.bmcs.maxPerBMC["bmc-00000"] != 1 {
					t.Errorf("while abandoned probe runs: skipped busy %d, max in flight %d; want 1, 1", st.Skipped.Busy, r.bmcs.maxPerBMC["bmc-00000"])
				}
				time.Sleep(hang)
				st, _ = r.s.RunOnce(context.Background())
				if st.Skipped.Busy != 0 || r.bmcs.probes()[slow] != 2 {
					t.Errorf("after it returned: skipped busy %d, probes %d; want 0, 2", st.Skipped.Busy, r.bmcs.probes()[slow])
				}
				time.Sleep(hang)
			})
		})
	}
}

// At most one probe per BMC key and at most Workers (or the pool's
// periodic share) in all; the bound is reached, not merely respected.
func TestConcurrencyBounds(t *testing.T) {
	const latency = 100 * time.Millisecond
	tests := map[string]struct {
		nodes         int
		bmc           func(i int) string
		workers       int
		pool          *workers.Config
		wantMaxGlobal int
		wantDuration  time.Duration
	}{
		"one BMC, ten nodes": {
			nodes: 10, bmc: func(int) string { return "10.0.0.1:623" }, workers: 4,
			wantMaxGlobal: 1, wantDuration: 10 * latency,
		},
		"own BMCs": {
			nodes: 40, bmc: ownBMC, workers: 4,
			wantMaxGlobal: 4, wantDuration: 10 * latency,
		},
		"three shared BMCs and singles": {
			nodes: 50, bmc: func(i int) string {
				if i < 30 {
					return fmt.Sprintf("chassis-%d", i%3)
				}
				return ownBMC(i)
			},
			workers: 8, wantMaxGlobal: 8, wantDuration: 10 * latency,
		},
		"pool share narrower than Workers": {
			nodes: 40, bmc: ownBMC, workers: 8, pool: &workers.Config{Size: 6, ReservedForAPI: 2},
			wantMaxGlobal: 4, wantDuration: 10 * latency,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var runner Runner
				if tc.pool != nil {
					p, err := workers.New(*tc.pool)
					if err != nil {
						t.Fatal(err)
					}
					defer p.Close(context.Background())
					runner = p
				}
				r := newRig(t, testConfig(tc.workers), nodes(tc.nodes, tc.bmc), latency, runner)
				st, err := r.s.RunOnce(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for key, n := range r.bmcs.maxPerBMC {
					if n != 1 {
						t.Errorf("BMC %s had %d probes in flight, want 1", key, n)
					}
				}
				if r.bmcs.maxGlobal != tc.wantMaxGlobal {
					t.Errorf("max in flight %d, want %d", r.bmcs.maxGlobal, tc.wantMaxGlobal)
				}
				if st.Probed != tc.nodes || st.Duration != tc.wantDuration {
					t.Errorf("probed %d in %v, want %d in %v", st.Probed, st.Duration, tc.nodes, tc.wantDuration)
				}
			})
		})
	}
}

// Periodic work saturating its share does not keep an API task from a
// worker; a full pool refuses the API task at once.
func TestAPIWhileSyncSaturates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool, err := workers.New(workers.Config{Size: 5, ReservedForAPI: 1})
		if err != nil {
			t.Fatal(err)
		}
		r := newRig(t, testConfig(8), nodes(20, ownBMC), time.Second, pool)
		done := make(chan Stats)
		go func() {
			st, _ := r.s.RunOnce(context.Background())
			done <- st
		}()
		time.Sleep(500 * time.Millisecond)
		if ps := pool.Stats(); ps.Periodic != 4 {
			t.Fatalf("sync holds %d workers, want its whole share of 4", ps.Periodic)
		}
		asked := time.Now()
		ran := make(chan time.Time, 1)
		hold := make(chan struct{})
		if err := pool.TryAPI(func() { ran <- time.Now(); <-hold }); err != nil {
			t.Fatalf("API task while sync saturates: %v", err)
		}
		if at := <-ran; at != asked {
			t.Errorf("API task started %v after it was asked for, want at once", at.Sub(asked))
		}
		if err := pool.TryAPI(func() {}); !errors.Is(err, workers.ErrNoFreeWorker) {
			t.Errorf("API task on a full pool = %v, want ErrNoFreeWorker", err)
		}
		close(hold)
		st := <-done
		if st.Probed != 20 || r.bmcs.maxGlobal != 4 {
			t.Errorf("probed %d with %d in flight, want 20 with 4", st.Probed, r.bmcs.maxGlobal)
		}
		_ = pool.Close(context.Background())
	})
}

// A runner that refuses work (the pool closed under the scheduler) ends the
// cycle early without hanging; the nodes left are counted as unstarted.
func TestRunnerRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool, err := workers.New(workers.Config{Size: 2})
		if err != nil {
			t.Fatal(err)
		}
		r := newRig(t, testConfig(2), nodes(10, ownBMC), time.Second, pool)
		go func() {
			time.Sleep(1500 * time.Millisecond)
			_ = pool.Close(context.Background())
		}()
		st, err := r.s.RunOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Probed != 4 || st.Unstarted != 6 || st.Duration != 2*time.Second {
			t.Errorf("probed %d, unstarted %d in %v; want 4, 6 in 2s", st.Probed, st.Unstarted, st.Duration)
		}
	})
}
