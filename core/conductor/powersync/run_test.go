package powersync

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Cycles start every Interval; one that overruns is followed at once;
// Interval 0 runs none.
func TestRunInterval(t *testing.T) {
	tests := map[string]struct {
		interval   time.Duration
		nodes      int
		bmc        func(int) string
		runFor     time.Duration
		wantStarts []time.Duration
	}{
		"every interval": {
			interval: 10 * time.Second, nodes: 4, bmc: ownBMC, runFor: 25 * time.Second,
			wantStarts: []time.Duration{0, 10 * time.Second, 20 * time.Second},
		},
		"overrun starts the next at once": { // 6 serial probes of 3 s on one BMC
			interval: 10 * time.Second, nodes: 6, bmc: func(int) string { return "shared" }, runFor: 40 * time.Second,
			wantStarts: []time.Duration{0, 18 * time.Second, 36 * time.Second},
		},
		"disabled": {interval: 0, nodes: 4, bmc: ownBMC, runFor: time.Hour},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := testConfig(4)
				cfg.Interval = tc.interval
				r := newRig(t, cfg, nodes(tc.nodes, tc.bmc), 3*time.Second, nil)
				start := time.Now()
				errc := make(chan error)
				go func() { errc <- r.s.Run(context.Background()) }()
				time.Sleep(tc.runFor)
				if err := r.s.Stop(context.Background()); err != nil {
					t.Fatal(err)
				}
				if err := <-errc; err != nil {
					t.Fatalf("Run after Stop = %v, want nil", err)
				}
				var starts []time.Duration
				for _, st := range r.rec.stats() {
					starts = append(starts, st.Started.Sub(start))
				}
				if diff := cmp.Diff(tc.wantStarts, starts); diff != "" {
					t.Errorf("cycle starts (-want +got):\n%s", diff)
				}
				if err := r.s.Run(context.Background()); !errors.Is(err, ErrRunning) {
					t.Errorf("second Run = %v, want ErrRunning", err)
				}
			})
		})
	}
}

// With Spread, each node's probe starts at its own hash-derived offset in
// the cycle, the same offset every cycle, so no moment sees every BMC asked
// at once and each node is probed once per Interval.
func TestSpread(t *testing.T) {
	const n, interval, spread = 200, 20 * time.Second, 10 * time.Second
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig(50)
		cfg.Interval, cfg.Spread = interval, spread
		r := newRig(t, cfg, nodes(n, ownBMC), 10*time.Millisecond, nil)
		start := time.Now()
		go r.s.Run(context.Background())
		time.Sleep(interval + spread)
		if err := r.s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		perSecond := map[time.Duration]int{}
		for uuid, starts := range r.bmcs.starts {
			if len(starts) != 2 {
				t.Fatalf("%s probed %d times in two cycles, want 2", uuid, len(starts))
			}
			want := offset(uuid, spread)
			if got := starts[0].Sub(start); got != want || starts[1].Sub(starts[0]) != interval {
				t.Errorf("%s probed at %v and %v, want at %v and one interval later", uuid, got, starts[1].Sub(start), want)
			}
			perSecond[starts[0].Sub(start).Truncate(time.Second)]++
		}
		// 200 probes over 10 s: a fair spread puts ~20 in each second.
		for sec, count := range perSecond {
			if count > 2*n/int(spread/time.Second) {
				t.Errorf("%d probes started in second %v, want a spread of about %d", count, sec, n/int(spread/time.Second))
			}
		}
		if len(perSecond) != int(spread/time.Second) {
			t.Errorf("probes started in %d distinct seconds, want all %d of the spread", len(perSecond), spread/time.Second)
		}
	})
}

// Stop stops new probes and waits for running ones up to its deadline;
// cancelling Run's context cancels them. Cut-short probes are not failures.
func TestStop(t *testing.T) {
	const latency, stopAt = time.Second, 1500 * time.Millisecond
	tests := map[string]struct {
		cancelRun     bool          // cancel Run's ctx instead of calling Stop
		stopWithin    time.Duration // Stop's deadline
		wantStopErr   error
		wantRunErr    error
		wantReturnAt  time.Duration
		wantProbed    int
		wantCancelled int
	}{
		"waits for running probes": {
			stopWithin: time.Minute, wantReturnAt: 2 * time.Second, wantProbed: 4,
		},
		"cancels them at its deadline": {
			stopWithin: 200 * time.Millisecond, wantStopErr: context.DeadlineExceeded,
			wantReturnAt: stopAt + 200*time.Millisecond, wantProbed: 2, wantCancelled: 2,
		},
		"cancelled run context": {
			cancelRun: true, wantRunErr: context.Canceled,
			wantReturnAt: stopAt, wantProbed: 2, wantCancelled: 2,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := testConfig(2)
				r := newRig(t, cfg, nodes(10, ownBMC), latency, nil)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				start := time.Now()
				errc := make(chan error)
				go func() { errc <- r.s.Run(ctx) }()
				time.Sleep(stopAt) // two probes done, two running

				stopped := time.Now()
				if tc.cancelRun {
					cancel()
				} else {
					sctx, scancel := context.WithTimeout(context.Background(), tc.stopWithin)
					defer scancel()
					if err := r.s.Stop(sctx); !errors.Is(err, tc.wantStopErr) {
						t.Errorf("Stop = %v, want %v", err, tc.wantStopErr)
					}
				}
				if err := <-errc; !errors.Is(err, tc.wantRunErr) {
					t.Errorf("Run = %v, want %v", err, tc.wantRunErr)
				}
				if got := time.Since(start); got != tc.wantReturnAt {
					t.Errorf("returned at %v, want %v", got, tc.wantReturnAt)
				}
				if n := r.bmcs.startedAfter(stopped); n != 0 {
					t.Errorf("%d probes started after the stop", n)
				}
				if r.bmcs.global != 0 {
					t.Errorf("%d probes still running after Run returned", r.bmcs.global)
				}
				sts := r.rec.stats()
				if len(sts) != 1 {
					t.Fatalf("%d cycles reported, want 1", len(sts))
				}
				st := sts[0]
				if st.Probed != tc.wantProbed || st.Cancelled != tc.wantCancelled || st.Unstarted != 6 || st.Failed != 0 || len(r.rec.failures) != 0 {
					t.Errorf("probed %d cancelled %d unstarted %d failed %d (recorded %d); want %d, %d, 6, 0 (0)",
						st.Probed, st.Cancelled, st.Unstarted, st.Failed, len(r.rec.failures), tc.wantProbed, tc.wantCancelled)
				}
				if !tc.cancelRun {
					if _, err := r.s.RunOnce(context.Background()); !errors.Is(err, ErrStopped) {
						t.Errorf("RunOnce after Stop = %v, want ErrStopped", err)
					}
				}
			})
		})
	}
}

// Stop before Run makes Run return at once.
func TestStopBeforeRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, testConfig(2), nodes(3, ownBMC), time.Second, nil)
		if err := r.s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := r.s.Run(context.Background()); err != nil {
			t.Fatalf("Run after Stop = %v, want nil", err)
		}
		if len(r.bmcs.probes()) != 0 {
			t.Errorf("probes ran after Stop: %v", r.bmcs.probes())
		}
	})
}
