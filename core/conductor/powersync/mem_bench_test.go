package powersync

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// instant answers every probe at once with "power on".
type instant struct{}

func (instant) GetPowerState(context.Context, Node) (string, error) { return "power on", nil }

// nopRecorder records nothing.
type nopRecorder struct{}

func (nopRecorder) PowerChanged(context.Context, Node, string) error { return nil }
func (nopRecorder) ProbeFailed(context.Context, Node, error, int)    {}
func (nopRecorder) ProbeRecovered(context.Context, Node, int)        {}
func (nopRecorder) CycleDone(context.Context, Stats)                 {}

// BenchmarkCycleMemory runs cycles over 100,000 nodes, each its own BMC
// as fake-hardware's are, with probes answering at once: allocations per
// cycle (-benchmem) and the heap the scheduler keeps between cycles
// (retained-B), the conductor's steady footprint for power sync.
func BenchmarkCycleMemory(b *testing.B) {
	const n = 100_000
	for _, bmc := range []struct {
		name string
		of   func(i int) string
	}{{"ownBMC", func(int) string { return "" }}, {"by10", func(i int) string { return ownBMC(i / 10) }}} {
		b.Run(fmt.Sprintf("nodes=%d/bmc=%s", n, bmc.name), func(b *testing.B) {
			src := &fakeSource{nodes: make([]Node, n)}
			for i := range src.nodes {
				src.nodes[i] = Node{UUID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), BMC: bmc.of(i), PowerState: "power on"}
			}
			s, err := New(Config{Interval: 60_000_000_000, Workers: 8, CallTimeout: 5_000_000_000},
				Deps{Source: src, Prober: instant{}, Recorder: nopRecorder{}})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if _, err := s.RunOnce(ctx); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := s.RunOnce(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			var with, without runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&with)
			runtime.KeepAlive(s)
			s = nil
			runtime.GC()
			runtime.ReadMemStats(&without)
			b.ReportMetric(float64(with.HeapAlloc)-float64(without.HeapAlloc), "retained-B")
			runtime.KeepAlive(src)
		})
	}
}

// BenchmarkNewCycle arranges 100,000 nodes, each its own BMC, into a
// cycle's queues: the CPU a cycle spends before its first probe.
func BenchmarkNewCycle(b *testing.B) {
	const n = 100_000
	var l listing
	for i := range n {
		l.add(Node{UUID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i*7919%n, i), PowerState: "power on"})
	}
	l.seal()
	s, err := New(DefaultConfig(), Deps{Source: &fakeSource{}, Prober: instant{}, Recorder: nopRecorder{}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.newCycle(time.Now(), &l)
	}
}
