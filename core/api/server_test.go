package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestServeDrainsInFlightRequests: after the context ends, a request that
// was already running finishes with its answer and Serve returns cleanly.
func TestServeDrainsInFlightRequests(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		_, _ = io.WriteString(w, "done")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h, ServeOptions{ShutdownTimeout: 5 * time.Second}) }()
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	<-started
	cancel()
	time.Sleep(50 * time.Millisecond) // shutdown has begun; the request is still running
	close(release)
	if body := <-got; body != "done" {
		t.Errorf("in-flight request got %q", body)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// TestServeCutsOffAfterTimeout: a request outliving the drain is cut off
// and Serve says so.
func TestServeCutsOffAfterTimeout(t *testing.T) {
	started := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h, ServeOptions{ShutdownTimeout: 50 * time.Millisecond}) }()
	go func() {
		if resp, err := http.Get("http://" + ln.Addr().String() + "/"); err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	cancel()
	if err := <-served; err == nil || !strings.Contains(err.Error(), "cut off") {
		t.Errorf("Serve = %v, want a cut-off error", err)
	}
}

// TestServeTLSMinimumVersion: with TLS 1.3 as the minimum, a TLS 1.2-only
// client is refused and a TLS 1.3 client served.
func TestServeTLSMinimumVersion(t *testing.T) {
	ts := httptest.NewTLSServer(nil) // borrows its test certificate
	certs := ts.TLS.Certificates
	ts.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = Serve(ctx, ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
			ServeOptions{TLS: &tls.Config{Certificates: certs, MinVersion: tls.VersionTLS13}, ShutdownTimeout: time.Second})
	}()
	get := func(maxV uint16) error {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MaxVersion: maxV}}}
		resp, err := c.Get("https://" + ln.Addr().String() + "/")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(tls.VersionTLS12); err == nil {
		t.Error("a TLS 1.2 client was served")
	}
	if err := get(tls.VersionTLS13); err != nil {
		t.Errorf("TLS 1.3 client: %v", err)
	}
}

// closeSignalListener reports when Serve closes the listener.
type closeSignalListener struct {
	net.Listener
	once   sync.Once
	closed chan struct{}
}

func (l *closeSignalListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// TestServeHealthAndShutdownDelay walks a load balancer's view of a
// SIGTERM: /healthz is 200 while serving; during shutdown_delay it is 503
// while other requests are still served, with Connection: close; after
// the delay new connections are refused and the request in flight still
// gets its answer.
func TestServeHealthAndShutdownDelay(t *testing.T) {
	slowStarted, slowRelease := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(slowStarted)
			<-slowRelease
		}
		_, _ = io.WriteString(w, "served "+r.URL.Path)
	})
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &closeSignalListener{Listener: inner, closed: make(chan struct{})}
	drainBegan, delayOver := make(chan struct{}), make(chan time.Time)
	opts := ServeOptions{ShutdownTimeout: 5 * time.Second, ShutdownDelay: time.Hour,
		delay: func(d time.Duration) <-chan time.Time {
			if d != time.Hour {
				t.Errorf("delay = %s, want ShutdownDelay", d)
			}
			close(drainBegan)
			return delayOver
		}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h, opts) }()
	base := "http://" + inner.Addr().String()
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	resp, body := get("/healthz")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" ||
		!strings.Contains(body, `"ok"`) {
		t.Fatalf("GET /healthz while serving: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if resp.Close {
		t.Error("GET /healthz while serving closed the connection")
	}
	if resp, err := http.Post(base+"/healthz", "application/json", nil); err != nil {
		t.Errorf("POST /healthz: %v", err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST /healthz: %d, want 405", resp.StatusCode)
		}
	}
	slow := make(chan string, 1)
	go func() {
		resp, err := http.Get(base + "/slow")
		if err != nil {
			slow <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		slow <- fmt.Sprintf("%d %s", resp.StatusCode, b)
	}()
	<-slowStarted

	cancel() // SIGTERM
	<-drainBegan
	resp, body = get("/healthz")
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, `"draining"`) {
		t.Errorf("GET /healthz while draining: %d %q, want 503", resp.StatusCode, body)
	}
	resp, body = get("/v1")
	if resp.StatusCode != http.StatusOK || body != "served /v1" {
		t.Errorf("GET /v1 while draining: %d %q, want it served", resp.StatusCode, body)
	}
	if !resp.Close {
		t.Error("GET /v1 while draining kept the connection alive; want Connection: close")
	}
	select {
	case <-ln.closed:
		t.Fatal("listener closed before shutdown_delay ended")
	default:
	}

	close(delayOver)
	<-ln.closed
	// The listener itself is closed: it accepts nothing more. (Dialing its
	// old port proves nothing: under a parallel `go test ./...` another test
	// may already listen on the freed port.)
	if c, err := inner.Accept(); err == nil {
		c.Close()
		t.Error("the listener still accepts connections after shutdown_delay")
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned %v with a request in flight", err)
	default:
	}
	close(slowRelease)
	if got := <-slow; got != "200 served /slow" {
		t.Errorf("in-flight request got %q", got)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// TestAccessLogLine: every request is logged once, after it is answered,
// with its request id (the one in the response header), method, path,
// status and duration.
func TestAccessLogLine(t *testing.T) {
	var buf bytes.Buffer
	e := newEnv(t, func(d *Deps) { d.Logger = slog.New(slog.NewJSONHandler(&buf, nil)) })
	r := e.do(http.MethodGet, "/v1/nodes/no-such-node", "1.31", nil)
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	last := lines[len(lines)-1]
	var line map[string]any
	if err := json.Unmarshal(last, &line); err != nil {
		t.Fatalf("access log line %q: %v", last, err)
	}
	want := map[string]any{"level": "INFO", "msg": "request", "request_id": r.Header.Get(HeaderRequestID),
		"method": "GET", "path": "/v1/nodes/no-such-node", "status": 404.0}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("access log %s = %v, want %v (line %s)", k, line[k], v, last)
		}
	}
	if d, ok := line["duration_ms"].(float64); !ok || d < 0 || line["request_id"] == "" {
		t.Errorf("access log line %s: no duration or request id", last)
	}
}
