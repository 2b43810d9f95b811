package redfish_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
)

// password is distinctive so that a leak anywhere is found by a scan.
const password = "Zq9-rivet-S3cr3t!pw"

// iso is the deploy image every test deploys.
const iso = "http://images.example.test/deploy.iso"

// bmcSim is a simulator behind an HTTP server on 127.0.0.1:0, with hooks to
// count and meddle: rewrite edits GET answers (to play another vendor),
// intercept answers a request itself.
type bmcSim struct {
	*sim.Simulator
	URL       string
	logins    atomic.Int64 // POSTs to the session collection
	inFlight  atomic.Int64
	maxFlight atomic.Int64
	mu        sync.Mutex
	seen      []string // "METHOD path" of every request
	rewrite   func(path string, body map[string]any)
	intercept func(w http.ResponseWriter, r *http.Request) bool
}

func startSim(t *testing.T, opts sim.Options, hooks ...func(*bmcSim)) *bmcSim {
	t.Helper()
	if opts.Password == "" {
		opts.Password = password
	}
	s, err := sim.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	b := &bmcSim{Simulator: s}
	for _, h := range hooks {
		h(b)
	}
	srv := httptest.NewServer(http.HandlerFunc(b.serve))
	b.URL = srv.URL
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = s.Close() }) // first: releases hung requests
	return b
}

func (b *bmcSim) serve(w http.ResponseWriter, r *http.Request) {
	n := b.inFlight.Add(1)
	defer b.inFlight.Add(-1)
	for m := b.maxFlight.Load(); n > m && !b.maxFlight.CompareAndSwap(m, n); m = b.maxFlight.Load() {
	}
	b.mu.Lock()
	b.seen = append(b.seen, r.Method+" "+r.URL.Path)
	b.mu.Unlock()
	if r.Method == http.MethodPost && strings.TrimRight(r.URL.Path, "/") == "/redfish/v1/SessionService/Sessions" {
		b.logins.Add(1)
	}
	if b.intercept != nil && b.intercept(w, r) {
		return
	}
	if b.rewrite == nil || r.Method != http.MethodGet {
		b.Handler().ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	b.Handler().ServeHTTP(rec, r)
	var body map[string]any
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &body) != nil {
		copyResponse(w, rec.Result().Header, rec.Code, rec.Body.Bytes())
		return
	}
	b.rewrite(r.URL.Path, body)
	out, _ := json.Marshal(body)
	copyResponse(w, rec.Result().Header, rec.Code, out)
}

func copyResponse(w http.ResponseWriter, h http.Header, code int, body []byte) {
	for k, v := range h {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// count reports how many requests matched method and a path containing part.
func (b *bmcSim) count(method, part string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, s := range b.seen {
		m, p, _ := strings.Cut(s, " ")
		if m == method && strings.Contains(p, part) {
			n++
		}
	}
	return n
}

func (b *bmcSim) state(t *testing.T, id string) sim.State {
	t.Helper()
	st, err := b.System(id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// raw sends one request with basic auth, for setting a scene and reading
// the simulator's own answers independently of gofish.
func (b *bmcSim) raw(t *testing.T, method, path string, body any, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		p, _ := json.Marshal(body)
		rd = bytes.NewReader(p)
	}
	req, _ := http.NewRequest(method, b.URL+path, rd)
	req.SetBasicAuth(sim.DefaultUsername, password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		p, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, p)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
}

// node is a node of system id behind b.
func node(b *bmcSim, id string, extra ...any) plugins.Node {
	di := plugins.DriverInfo{
		redfish.KeyAddress:  b.URL,
		redfish.KeySystemID: "/redfish/v1/Systems/" + id,
		redfish.KeyUsername: sim.DefaultUsername,
		redfish.KeyPassword: password,
	}
	for i := 0; i+1 < len(extra); i += 2 {
		di[extra[i].(string)] = extra[i+1]
	}
	return plugins.Node{UUID: "uuid-" + id, HardwareType: redfish.HardwareType, DriverInfo: di,
		InstanceInfo: map[string]any{redfish.KeyBootISO: iso}}
}

// testOptions are fast: short polls, timeouts and cooldowns.
func testOptions() redfish.Options {
	o := redfish.DefaultOptions()
	o.ConnectionTimeout = 3 * time.Second
	o.PowerPollInterval = 10 * time.Millisecond
	o.PowerStateChangeTimeout = 10 * time.Second
	o.BreakerThreshold = 3
	o.BreakerCooldown = time.Minute
	o.SessionRetryMax = 50 * time.Millisecond
	return o
}

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// newDriver returns a driver logging at debug level into a buffer that is
// scanned for the password when the test ends, and closed then.
func newDriver(t *testing.T, opts redfish.Options) *redfish.Driver {
	t.Helper()
	logs := &syncBuffer{}
	d := redfish.New(slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = d.Close(ctx)
		if strings.Contains(logs.String(), password) {
			t.Errorf("the password reached the log:\n%s", logs.String())
		}
	})
	return d
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// noSecret fails t when err's text holds the password.
func noSecret(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), password) {
		t.Errorf("error leaks the password: %v", err)
	}
}

// must fails t on err (after checking it for the password).
func must(t *testing.T, what string, err error) {
	t.Helper()
	noSecret(t, err)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// asError returns err as a *redfish.Error or fails t.
func asError(t *testing.T, err error) *redfish.Error {
	t.Helper()
	var e *redfish.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *redfish.Error", err, err)
	}
	return e
}

// fakeClock is a settable clock for the simulator's sessions and the
// driver's breakers.
type fakeClock struct{ ns atomic.Int64 }

func newClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }
