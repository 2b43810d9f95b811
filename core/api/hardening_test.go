package api

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRateLimitPerClient: each client IP gets its burst, then 429 with
// Ironic's body and Retry-After, independently of other clients, and
// tokens come back at the configured rate.
func TestRateLimitPerClient(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	e := newEnv(t, func(d *Deps) { d.RateLimit, d.Now = RateLimit{PerSecond: 2, Burst: 3}, clock })
	get := func(ip string) resp {
		req := httptest.NewRequest("GET", "http://rivet.test/v1/nodes", nil)
		req.RemoteAddr = net.JoinHostPort(ip, "40000")
		req.Header.Set(HeaderVersion, "1.26")
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		return resp{Code: rec.Code, Header: rec.Result().Header, Body: rec.Body.Bytes()}
	}
	steps := []struct {
		ip      string
		advance time.Duration
		want    int
		retry   string
	}{
		{ip: "10.0.0.1", want: 200}, {ip: "10.0.0.1", want: 200}, {ip: "10.0.0.1", want: 200},
		{ip: "10.0.0.1", want: 429, retry: "1"},
		{ip: "2001:db8::7", want: 200}, // another client is not limited by the first
		{ip: "10.0.0.1", advance: 500 * time.Millisecond, want: 200},
		{ip: "10.0.0.1", want: 429, retry: "1"},
		{ip: "10.0.0.1", advance: 2 * time.Minute, want: 200}, // refilled (and swept)
	}
	for i, st := range steps {
		advance(st.advance)
		r := get(st.ip)
		if r.Code != st.want {
			t.Fatalf("step %d (%s): %d, want %d: %s", i, st.ip, r.Code, st.want, r.Body)
		}
		if st.want == 429 {
			if got := r.Header.Get("Retry-After"); got != st.retry {
				t.Errorf("step %d: Retry-After %q, want %q", i, got, st.retry)
			}
			if f := r.Fault(t); !strings.Contains(f, "Too many requests") {
				t.Errorf("step %d: fault %q", i, f)
			}
		}
	}
}

func TestRateLimitDisabledByDefault(t *testing.T) {
	e := newEnv(t)
	for i := range 500 {
		if r := e.do("GET", "/v1/nodes", "1.26", nil); r.Code != 200 {
			t.Fatalf("request %d: %d", i, r.Code)
		}
	}
}

// TestStrictJSONBodies: a body that two JSON readers could read
// differently, or that nests absurdly, is a 400 with Ironic's body that
// says why, on every kind of body.
func TestStrictJSONBodies(t *testing.T) {
	e := newEnv(t)
	id := e.node(map[string]any{"name": "strict"})
	deep := strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70)
	tests := map[string]struct {
		method, path, body, want string
	}{
		"create, duplicate key": {"POST", "/v1/nodes", `{"driver":"fake-hardware","driver":"ipmi"}`, `duplicate key "driver"`},
		"create, too deep":      {"POST", "/v1/nodes", `{"driver":"fake-hardware","extra":` + deep + `}`, "nesting deeper than 64 levels"},
		"create, not UTF-8":     {"POST", "/v1/nodes", "{\"driver\":\"fake-hardware\",\"name\":\"\xff\"}", "not valid UTF-8"},
		"patch, too deep":       {"PATCH", "/v1/nodes/" + id, `[{"op":"add","path":"/extra/a","value":` + deep + `}]`, "nesting deeper"},
		"patch, duplicate":      {"PATCH", "/v1/nodes/" + id, `[{"op":"add","op":"remove","path":"/extra/a"}]`, `duplicate key "op"`},
		"port, duplicate":       {"POST", "/v1/ports", `{"node_uuid":"` + id + `","address":"52:54:00:00:00:01","address":"x"}`, `duplicate key "address"`},
		"provision, too deep":   {"PUT", "/v1/nodes/" + id + "/states/provision", `{"target":"manage","x":` + deep + `}`, "nesting deeper"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, "1.26", tc.body)
			if r.Code != http.StatusBadRequest {
				t.Fatalf("%d, want 400: %s", r.Code, r.Body)
			}
			if f := r.Fault(t); !strings.Contains(f, tc.want) {
				t.Errorf("fault %q lacks %q", f, tc.want)
			}
		})
	}
}

// TestServeHeaderLimit: headers beyond MaxHeaderBytes get 431 before any
// handler runs; headers within it are served.
func TestServeHeaderLimit(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	go func() {
		served <- Serve(ctx, ln, h, ServeOptions{ShutdownTimeout: time.Second, MaxHeaderBytes: 8 << 10})
	}()
	defer func() { cancel(); <-served }()
	for _, tc := range []struct {
		size int
		want int
	}{{1 << 10, 200}, {64 << 10, http.StatusRequestHeaderFieldsTooLarge}} {
		req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/", nil)
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
	if DefaultMaxHeaderBytes >= 1<<20 {
		t.Errorf("DefaultMaxHeaderBytes %d is not below net/http's default", DefaultMaxHeaderBytes)
	}
}
