package powersync

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// boundCase is a cycle-length scenario: N nodes at 100 ms per call, W
// workers, perBMC nodes behind each BMC.
type boundCase struct{ nodes, workers, perBMC int }

var boundCases = []boundCase{
	{nodes: 1000, workers: 100, perBMC: 1},
	{nodes: 1000, workers: 250, perBMC: 1},
	{nodes: 10000, workers: 100, perBMC: 1},
	{nodes: 10000, workers: 250, perBMC: 1},
	{nodes: 1000, workers: 100, perBMC: 10}, // chassis of 10 behind one BMC
	{nodes: 1000, workers: 100, perBMC: 20}, // serial per-BMC time dominates
}

func (bc boundCase) name() string {
	return fmt.Sprintf("nodes=%d/workers=%d/perBMC=%d", bc.nodes, bc.workers, bc.perBMC)
}

// On the fake clock a cycle's length measures the scheduling itself (no
// CPU time): it must pack probes to within 2% of N × latency / W, or the
// busiest BMC's serial time when that is larger.
func TestCycleBound(t *testing.T) {
	const latency = 100 * time.Millisecond
	for _, bc := range boundCases {
		t.Run(bc.name(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				bmc := func(i int) string { return ownBMC(i / bc.perBMC) }
				r := newRig(t, testConfig(bc.workers), nodes(bc.nodes, bmc), latency, nil)
				st, err := r.s.RunOnce(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				bmcs := bc.nodes / bc.perBMC
				want := max(time.Duration(bc.nodes)*latency/time.Duration(min(bc.workers, bmcs)),
					time.Duration(bc.perBMC)*latency)
				if st.Probed != bc.nodes || st.Bound != want {
					t.Fatalf("probed %d, bound %v; want %d, %v", st.Probed, st.Bound, bc.nodes, want)
				}
				if st.Ratio() > 1.02 {
					t.Errorf("cycle %v is %.3f× its bound %v", st.Duration, st.Ratio(), st.Bound)
				}
				t.Logf("simulated cycle %v, bound %v, ratio %.3f", st.Duration, st.Bound, st.Ratio())
			})
		})
	}
}

// BenchmarkCycle runs full cycles on the real clock, so the figures include
// the scheduler's own CPU time. Each iteration is one cycle (1-10 s):
//
//	go test -run '^$' -bench Cycle -benchtime 1x ./core/conductor/powersync/
func BenchmarkCycle(b *testing.B) {
	const latency = 100 * time.Millisecond
	for _, bc := range boundCases {
		b.Run(bc.name(), func(b *testing.B) {
			bmcs := newFakeBMCs(latency)
			src := &fakeSource{nodes: nodes(bc.nodes, func(i int) string { return ownBMC(i / bc.perBMC) })}
			s, err := New(testConfig(bc.workers), Deps{Source: src, Prober: bmcs, Recorder: newFakeRecorder(src)})
			if err != nil {
				b.Fatal(err)
			}
			var last Stats
			for b.Loop() {
				if last, err = s.RunOnce(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			bmcCount := bc.nodes / bc.perBMC
			ideal := max(time.Duration(bc.nodes)*latency/time.Duration(min(bc.workers, bmcCount)),
				time.Duration(bc.perBMC)*latency)
			b.ReportMetric(last.Duration.Seconds(), "cycle-s")
			b.ReportMetric(ideal.Seconds(), "ideal-s")
			b.ReportMetric(last.Bound.Seconds(), "bound-s")
			b.ReportMetric(float64(last.Duration)/float64(ideal), "ratio-ideal")
			b.ReportMetric(last.Ratio(), "ratio-bound")
		})
	}
}
