package powersync

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBreaker(t *testing.T) {
	type step struct {
		at          time.Duration // since t0
		fail, ok    bool          // event at this step, if any
		wantOpened  time.Duration // backoff the failure opened with; 0 if none
		wantState   breakerState  // after the event
		wantAllowed bool
	}
	cfg := BreakerConfig{Threshold: 3, Backoff: time.Minute, MaxBackoff: 4 * time.Minute}
	tests := map[string]struct {
		cfg   BreakerConfig
		steps []step
	}{
		"opens at threshold, half-opens after backoff, closes on success": {cfg: cfg, steps: []step{
			{at: 0, fail: true, wantState: stateClosed, wantAllowed: true},
			{at: time.Second, fail: true, wantState: stateClosed, wantAllowed: true},
			{at: 2 * time.Second, fail: true, wantOpened: time.Minute, wantState: stateOpen},
			{at: 61 * time.Second, wantState: stateOpen},
			{at: 62 * time.Second, wantState: stateHalfOpen, wantAllowed: true},
			{at: 62 * time.Second, ok: true, wantState: stateClosed, wantAllowed: true},
			// a fresh count: one failure does not reopen it
			{at: 63 * time.Second, fail: true, wantState: stateClosed, wantAllowed: true},
		}},
		"failed trials double the backoff up to the cap": {cfg: cfg, steps: []step{
			{at: 0, fail: true, wantState: stateClosed, wantAllowed: true},
			{at: 0, fail: true, wantState: stateClosed, wantAllowed: true},
			{at: 0, fail: true, wantOpened: time.Minute, wantState: stateOpen},
			{at: time.Minute, fail: true, wantOpened: 2 * time.Minute, wantState: stateOpen},
			{at: 3 * time.Minute, fail: true, wantOpened: 4 * time.Minute, wantState: stateOpen},
			{at: 7 * time.Minute, fail: true, wantOpened: 4 * time.Minute, wantState: stateOpen},
			{at: 11*time.Minute - time.Nanosecond, wantState: stateOpen},
			{at: 11 * time.Minute, ok: true, wantState: stateClosed, wantAllowed: true},
			// after a success the backoff starts over
			{at: 11 * time.Minute, fail: true, wantState: stateClosed, wantAllowed: true},
			{at: 11 * time.Minute, fail: true, wantState: stateClosed, wantAllowed: true},
			{at: 11 * time.Minute, fail: true, wantOpened: time.Minute, wantState: stateOpen},
		}},
		"threshold 0 never opens": {cfg: BreakerConfig{}, steps: []step{
			{at: 0, fail: true, wantState: stateClosed, wantAllowed: true},
			{at: 0, fail: true, wantState: stateClosed, wantAllowed: true},
			{at: 0, fail: true, wantState: stateClosed, wantAllowed: true},
			{at: 0, fail: true, wantState: stateClosed, wantAllowed: true},
		}},
		"threshold 1 opens on the first failure": {cfg: BreakerConfig{Threshold: 1, Backoff: time.Second, MaxBackoff: time.Second}, steps: []step{
			{at: 0, fail: true, wantOpened: time.Second, wantState: stateOpen},
			{at: time.Second, wantState: stateHalfOpen, wantAllowed: true},
		}},
	}
	t0 := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var b breaker
			for i, s := range tc.steps {
				now := t0.Add(s.at)
				var opened time.Duration
				switch {
				case s.fail:
					if ok, d := b.failure(tc.cfg, now); ok {
						opened = d
					}
				case s.ok:
					b.success()
				}
				if opened != s.wantOpened || b.state(tc.cfg, now) != s.wantState || b.allow(tc.cfg, now) != s.wantAllowed {
					t.Errorf("step %d at %v: opened %v, state %v, allowed %v; want %v, %v, %v",
						i, s.at, opened, b.state(tc.cfg, now), b.allow(tc.cfg, now), s.wantOpened, s.wantState, s.wantAllowed)
				}
			}
		})
	}
}

// Through the scheduler: a dead BMC with two nodes opens its breaker, its
// nodes are skipped, one half-open trial probe goes out after the backoff,
// and a successful trial closes it so the other node is probed too.
func TestBreakerInScheduler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig(4)
		cfg.Breaker = BreakerConfig{Threshold: 2, Backoff: 10 * time.Second, MaxBackoff: 40 * time.Second}
		ns := []Node{
			{UUID: "dead-1", BMC: "10.0.0.9:443", PowerState: "power on"},
			{UUID: "dead-2", BMC: "10.0.0.9:443", PowerState: "power on"},
			{UUID: "healthy", BMC: "10.0.0.1:443", PowerState: "power on"},
		}
		r := newRig(t, cfg, ns, 0, nil)
		r.bmcs.failing["10.0.0.9:443"] = errors.New("no route to host")
		start := time.Now()

		type want struct{ probed, failed, skipped int }
		cycles := []struct {
			at   time.Duration
			heal bool
			want want
		}{
			{at: 0, want: want{probed: 3, failed: 2}},                            // two failures: open for 10 s
			{at: 5 * time.Second, want: want{probed: 1, skipped: 2}},             // open
			{at: 12 * time.Second, want: want{probed: 2, failed: 1, skipped: 1}}, // trial fails: open for 20 s
			{at: 20 * time.Second, want: want{probed: 1, skipped: 2}},            // open
			{at: 33 * time.Second, heal: true, want: want{probed: 3}},            // trial succeeds: closed
		}
		for i, c := range cycles {
			time.Sleep(time.Until(start.Add(c.at)))
			if c.heal {
				r.bmcs.set(func(f *fakeBMCs) { delete(f.failing, "10.0.0.9:443") })
			}
			st, err := r.s.RunOnce(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got := want{st.Probed, st.Failed, st.Skipped.Breaker}
			if got != c.want {
				t.Errorf("cycle %d at %v: %+v, want %+v", i+1, c.at, got, c.want)
			}
		}
		wantProbes := map[string]int{"dead-1": 3, "dead-2": 2, "healthy": 5}
		if diff := cmp.Diff(wantProbes, r.bmcs.probes()); diff != "" {
			t.Errorf("probes per node (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]int{"dead-1": 2, "dead-2": 1}, r.rec.recovered); diff != "" {
			t.Errorf("recoveries (-want +got):\n%s", diff)
		}
	})
}
