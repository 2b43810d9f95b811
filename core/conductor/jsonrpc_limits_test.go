package conductor

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/rpc"
)

// TestJSONRPCHeaderLimit: the conductor's JSON-RPC listener answers 431 to
// headers beyond MaxHeaderBytes, and serves requests within it.
func TestJSONRPCHeaderLimit(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	server := rpc.NewServer(rpc.ConductorMethods(), nil, log, context.Background())
	l, err := newJSONRPCListener(server, JSONRPCOptions{HostIP: "127.0.0.1", MaxHeaderBytes: 8 << 10}, log)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = l.serve() }()
	t.Cleanup(func() { _ = l.shutdown(context.Background()) })
	for _, tc := range []struct {
		size, want int
	}{{1 << 10, http.StatusOK}, {64 << 10, http.StatusRequestHeaderFieldsTooLarge}} {
		req, _ := http.NewRequest("POST", "http://"+l.addr()+"/", strings.NewReader(`{"jsonrpc":"2.0","method":"x","params":{},"id":1}`))
		req.Header.Set("X-Big", strings.Repeat("a", tc.size))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%d-byte header: %d, want %d", tc.size, resp.StatusCode, tc.want)
		}
	}
}

// TestJSONRPCRefusesUnauthenticatedNonLoopback: whoever builds a
// conductor, its JSON-RPC listener never opens off loopback without
// users; it does not even bind.
func TestJSONRPCRefusesUnauthenticatedNonLoopback(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	server := rpc.NewServer(rpc.ConductorMethods(), nil, log, context.Background())
	for _, ip := range []string{"0.0.0.0", "::", "", "192.0.2.1"} {
		l, err := newJSONRPCListener(server, JSONRPCOptions{HostIP: ip}, log)
		if err == nil {
			_ = l.shutdown(context.Background())
			t.Errorf("host_ip %q without users: listener opened on %s", ip, l.addr())
			continue
		}
		if !strings.Contains(err.Error(), "without authentication") || !strings.Contains(err.Error(), "auth_strategy = http_basic") {
			t.Errorf("host_ip %q: %v", ip, err)
		}
	}
}
