package metrics

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Off loopback, the unauthenticated listener needs allow_remote.
func TestCheckAddress(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:9608", false, true},
		{"[::1]:9608", false, true},
		{"localhost:9608", false, true},
		{"0.0.0.0:9608", false, false},
		{":9608", false, false},
		{"192.0.2.7:9608", false, false},
		{"192.0.2.7:9608", true, true},
		{":9608", true, true},
		{"nonsense", true, false},
	} {
		err := CheckAddress("[metrics] api_listen", tc.addr, tc.remote)
		if (err == nil) != tc.ok {
			t.Errorf("CheckAddress(%q, remote=%v) = %v, want ok=%v", tc.addr, tc.remote, err, tc.ok)
		}
		if err != nil && tc.addr != "nonsense" && !strings.Contains(err.Error(), "allow_remote = true") {
			t.Errorf("error %q does not say how to allow it", err)
		}
	}
}

// The listener serves the registry at GET /metrics, nothing else.
func TestListenServes(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "rivet_test_total", Help: "A test counter."})
	reg.MustRegister(c)
	c.Add(3)
	srv, err := Listen("[metrics] api_listen", "127.0.0.1:0", false, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Serve()
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	get := func(method, path string) (int, string) {
		req, _ := http.NewRequest(method, "http://"+srv.Addr()+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("GET", "/metrics"); code != 200 || !strings.Contains(body, "rivet_test_total 3") {
		t.Fatalf("GET /metrics: %d %q", code, body)
	}
	if code, _ := get("GET", "/v1/nodes"); code != 404 {
		t.Fatalf("GET /v1/nodes: %d, want 404", code)
	}
	if code, _ := get("POST", "/metrics"); code != 405 {
		t.Fatalf("POST /metrics: %d, want 405", code)
	}
	if _, err := Listen("[metrics] api_listen", "0.0.0.0:0", false, reg, nil); err == nil {
		t.Fatal("a wildcard address was accepted without allow_remote")
	}
}
