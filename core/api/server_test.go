package api

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
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
