package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"

	"github.com/rivetmetal/rivet/core/rpc"
)

// BenchmarkCallJSONRPC measures one call over loopback HTTP with keep-alive
// and reports the median and p99 latency alongside ns/op. Run the package's
// benchmarks with
//
//	go test -run '^$' -bench . -benchmem ./core/rpc/jsonrpc
func BenchmarkCallJSONRPC(b *testing.B) {
	hs := httptest.NewServer(NewHTTPHandler(testServer(b, nil), HTTPHandlerOptions{}))
	defer hs.Close()
	c := rpc.NewClient(newTable(b), func() version.Version { return v("1.1") }, rpc.PlainCodec{}, NewHTTPTransport(HTTPTransportOptions{}))
	benchCalls(b, c, hs.Listener.Addr().String())
}

// BenchmarkCallLocal measures the in-process (all-in-one) path.
func BenchmarkCallLocal(b *testing.B) {
	c := rpc.NewClient(newTable(b), func() version.Version { return v("1.1") }, rpc.PlainCodec{}, rpc.LocalTransport{Server: testServer(b, nil)})
	benchCalls(b, c, "local")
}

func benchCalls(b *testing.B, c *rpc.Client, host string) {
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

// BenchmarkWireNodeRoundTrip is one JSON-RPC call carrying a node both ways
// without a network: the client encodes the node argument (the versioned
// core's codec) and the envelope, the server's HTTP handler parses and
// checks the envelope, hydrates the node at latest, runs a trivial handler
// and encodes the node it returns, and the client parses the response and
// hydrates the node. "pinned-0.1" runs both sides pinned to release 0.1, so
// the node crosses as Node 1.0 (backported on send, upgraded on receipt).
// Run with
//
//	go test -run '^$' -bench WireNodeRoundTrip -benchmem ./core/rpc/jsonrpc
func BenchmarkWireNodeRoundTrip(b *testing.B) {
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		b.Fatal(err)
	}
	tb := release.Default()
	pin01, err := tb.ParsePin("0.1")
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		pin  release.Pin
	}{{"latest", release.Pin{}}, {"pinned-0.1", pin01}} {
		b.Run(tc.name, func(b *testing.B) {
			pinner := release.NewPinner(tb, tc.pin)
			codec := rpc.ObjectCodecFor(reg, pinner)
			methods, err := rpc.NewMethods(v("1.0"), rpc.Method{Name: "update_node", Since: v("1.0"),
				Args: []rpc.Arg{{Name: "node", Since: v("1.0"), Required: true}}})
			if err != nil {
				b.Fatal(err)
			}
			srv := rpc.NewServer(methods, codec, quietLog(), context.Background())
			srv.Handle("update_node", func(_ context.Context, p rpc.Params) (any, error) { return p.Object("node") })
			h := NewHTTPHandler(srv, HTTPHandlerOptions{})
			c := rpc.NewClient(methods, func() version.Version { return pinner.Effective().RPC }, codec, rpc.LocalTransport{Server: srv})
			obj, _ := reg.New("Node")
			node := obj.(*objects.Node)
			node.UUID, node.Name, node.Driver = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", ptrTo("rack1-node7"), "redfish"
			node.DriverInfo = map[string]any{"redfish_address": "https://10.0.0.7", "redfish_username": "admin", "redfish_password": "secret"}
			node.Properties = map[string]any{"cpu_arch": "x86_64", "cpus": 32, "memory_mb": 131072}
			node.Extra = map[string]any{"rack": "r1", "slot": 7}
			ctx := rpc.WithRequestID(context.Background(), "req-1be26c0b-03f2-4d2e-ae87-c02d7f33c123")
			b.ReportAllocs()
			for b.Loop() {
				req, err := c.Prepare(ctx, "update_node", map[string]any{"node": node})
				if err != nil {
					b.Fatal(err)
				}
				body, err := requestBody(req)
				if err != nil {
					b.Fatal(err)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
				var resp response
				if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Error != nil {
					b.Fatalf("response %s: %v", rec.Body.Bytes(), err)
				}
				got, err := codec.Decode(resp.Result, false)
				if err != nil {
					b.Fatal(err)
				}
				if got.(*objects.Node).UUID != node.UUID {
					b.Fatal("wrong node back")
				}
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// benchNodeRequest is a create_node request carrying the golden Node
// primitive, compacted as it travels.
func benchNodeRequest(b *testing.B) *rpc.Request {
	b.Helper()
	prim, err := os.ReadFile(filepath.Join("..", "..", "objects", "testdata", "HEAD", "Node.json"))
	if err != nil {
		b.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, prim); err != nil {
		b.Fatal(err)
	}
	return &rpc.Request{Method: "create_node", Version: "1.56", RequestID: "req-1be26c0b-03f2-4d2e-ae87-c02d7f33c123",
		Params: map[string]json.RawMessage{"node": compact.Bytes()}}
}

// The envelope's four codecs on a create_node carrying a node, each
// against the encoding/json code it replaced ("std", fast_test.go).
// Run with
//
//	go test -run '^$' -bench 'ParseEnvelope|RequestBody|DecodeResponse|WriteResult' -benchmem ./core/rpc/jsonrpc

// BenchmarkParseEnvelope is the conductor reading a request body.
func BenchmarkParseEnvelope(b *testing.B) {
	body, err := requestBodyStd(benchNodeRequest(b))
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		fn   func([]byte) (*rpc.Request, json.RawMessage, *wireError)
	}{{"fast", parseEnvelope}, {"std", parseEnvelopeStd}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, werr := tc.fn(body); werr != nil {
					b.Fatal(werr.Message)
				}
			}
		})
	}
}

// BenchmarkRequestBody is the API writing a request body.
func BenchmarkRequestBody(b *testing.B) {
	req := benchNodeRequest(b)
	for _, tc := range []struct {
		name string
		fn   func(*rpc.Request) ([]byte, error)
	}{{"fast", requestBody}, {"std", requestBodyStd}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.fn(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeResponse is the API reading the reply that carries the
// node back.
func BenchmarkDecodeResponse(b *testing.B) {
	reply := []byte(`{"jsonrpc":"2.0","result":` + string(benchNodeRequest(b).Params["node"]) + `,"id":"req-1be26c0b-03f2-4d2e-ae87-c02d7f33c123"}` + "\n")
	for _, tc := range []struct {
		name string
		fn   func([]byte) (response, error)
	}{{"fast", decodeResponse}, {"std", decodeResponseStd}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.fn(reply); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWriteResult is the conductor writing the reply that carries
// the node back (into a writer that discards it, the same for both).
func BenchmarkWriteResult(b *testing.B) {
	res, id := benchNodeRequest(b).Params["node"], json.RawMessage(`"req-1be26c0b-03f2-4d2e-ae87-c02d7f33c123"`)
	for _, tc := range []struct {
		name string
		fn   func(http.ResponseWriter, json.RawMessage, json.RawMessage)
	}{{"fast", writeResult}, {"std", func(w http.ResponseWriter, res, id json.RawMessage) {
		writeJSON(w, http.StatusOK, response{JSONRPC: "2.0", Result: res, ID: id})
	}}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tc.fn(discardWriter{}, res, id)
			}
		})
	}
}

// discardWriter is an http.ResponseWriter that keeps nothing.
type discardWriter struct{}

func (discardWriter) Header() http.Header         { return http.Header{} }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}

// BenchmarkJSONRPCTransport times HTTPTransport (net/http's client) on
// one call over loopback to a conductor's handler in the same process.
// "small" is a call with a 40-byte reply, "node" one whose argument and
// reply are about 1.5 KB, as create_node's. cpu-µs/op is the process's
// CPU time (client and server) per call. Compare with
//
//	go test -run '^$' -bench JSONRPCTransport -benchmem -count 5 ./core/rpc/jsonrpc
func BenchmarkJSONRPCTransport(b *testing.B) {
	hs := httptest.NewServer(NewHTTPHandler(testServer(b, nil), HTTPHandlerOptions{}))
	defer hs.Close()
	host := hs.Listener.Addr().String()
	for _, size := range []struct {
		name string
		id   string
	}{{"small", "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"}, {"node", strings.Repeat("n", 1500)}} {
		b.Run(size.name+"/net-http", func(b *testing.B) {
			tr := NewHTTPTransport(HTTPTransportOptions{Timeout: time.Minute})
			c := rpc.NewClient(newTable(b), func() version.Version { return v("1.1") }, rpc.PlainCodec{}, tr)
			ctx, cancel := context.WithCancel(context.Background()) // as an API request's
			defer cancel()
			args := map[string]any{"node_id": size.id}
			if _, err := c.Call(ctx, host, "power", args); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu0 := processCPU()
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.Call(ctx, host, "power", args); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// processCPU is the user and system CPU time of the process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
