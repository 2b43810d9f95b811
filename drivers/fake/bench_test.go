package fake_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// getter is what both benchmarks call.
type getter interface {
	GetPowerState(ctx context.Context, node plugins.Node) (plugins.PowerState, error)
}

// benchPowerState times sequential GetPowerState calls and reports the
// median and p99 latency beside ns/op.
func benchPowerState(b *testing.B, g getter) {
	ctx := context.Background()
	node := plugins.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", DriverInfo: plugins.DriverInfo{"fake_password": "x"}}
	for range 100 { // warm up connections and caches
		if _, err := g.GetPowerState(ctx, node); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if _, err := g.GetPowerState(ctx, node); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkPowerStateDirect calls the Go implementation in process.
func BenchmarkPowerStateDirect(b *testing.B) {
	benchPowerState(b, fake.New(nil))
}

// BenchmarkPowerStateViaPlugin calls rivet-driver-fake as a real subprocess
// through plugins/host (gRPC over a Unix socket, AutoMTLS).
func BenchmarkPowerStateViaPlugin(b *testing.B) {
	m, err := host.New(host.Config{BuiltIn: map[string]host.Command{"fake": {Path: pluginBin}}, WatchInterval: -1,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	if err := m.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	d, err := m.Driver(fake.HardwareType)
	if err != nil {
		b.Fatal(err)
	}
	benchPowerState(b, d)
}
