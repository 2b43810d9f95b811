package rpc

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/version"
)

// BenchmarkCallJSONRPC measures one call over loopback HTTP with keep-alive
// and reports the median and p99 latency alongside ns/op.
func BenchmarkCallJSONRPC(b *testing.B) {
	hs := httptest.NewServer(NewHTTPHandler(testServer(b, nil), HTTPHandlerOptions{}))
	defer hs.Close()
	c := NewClient(newTable(b), func() version.Version { return v("1.1") }, PlainCodec{}, NewHTTPTransport(HTTPTransportOptions{}))
	benchCalls(b, c, hs.Listener.Addr().String())
}

// BenchmarkCallLocal measures the in-process (all-in-one) path.
func BenchmarkCallLocal(b *testing.B) {
	c := NewClient(newTable(b), func() version.Version { return v("1.1") }, PlainCodec{}, LocalTransport{Server: testServer(b, nil)})
	benchCalls(b, c, "local")
}

func benchCalls(b *testing.B, c *Client, host string) {
	ctx := context.Background()
	args := map[string]any{"node_id": "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"}
	lat := make([]time.Duration, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if _, err := c.Call(ctx, host, "power", args); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
