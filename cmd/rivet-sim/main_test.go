package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to read while run writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestServeSelfSignedUntilCancelled starts the binary's run on a free port
// with https and the password from the environment, talks to it, and stops
// it the way SIGINT does.
func TestServeSelfSignedUntilCancelled(t *testing.T) {
	const secret = "s3cret-from-env"
	t.Setenv("RIVET_SIM_PASSWORD", secret)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"rivet-sim", "--listen", "127.0.0.1:0", "--systems", "12", "--tls-self-signed", "--debug"}, &stdout, &stderr)
	}()
	urlRE := regexp.MustCompile(`https://127\.0\.0\.1:\d+/redfish/v1/`)
	var base string
	for deadline := time.Now().Add(5 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		base = urlRE.FindString(stdout.String())
	}
	if base == "" {
		t.Fatalf("no URL printed; stdout %q stderr %q", stdout.String(), stderr.String())
	}
	fp := regexp.MustCompile(`SHA-256 ([0-9A-F]{64})`).FindStringSubmatch(stdout.String())
	if fp == nil {
		t.Fatalf("no fingerprint printed: %q", stdout.String())
	}
	// Pin the printed fingerprint instead of trusting any certificate.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if got := fmt.Sprintf("%X", sha256.Sum256(cs.PeerCertificates[0].Raw)); got != fp[1] {
				return fmt.Errorf("certificate %s, printed %s", got, fp[1])
			}
			return nil
		},
	}}}
	defer client.CloseIdleConnections()
	for _, tc := range []struct {
		pass string
		want int
	}{{secret, http.StatusOK}, {"password", http.StatusUnauthorized}} {
		req, _ := http.NewRequest(http.MethodGet, base+"Systems/node-11", nil)
		req.SetBasicAuth("admin", tc.pass)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("password %q: status %d, want %d", tc.pass, res.StatusCode, tc.want)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d; stderr %q", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	out := stdout.String() + stderr.String()
	if !strings.Contains(out, "node-0 node-1 node-2 node-3 … node-11 (12 in all)") || !strings.Contains(stderr.String(), "path=/redfish/v1/Systems/node-11") {
		t.Errorf("output lacks the ids or the debug log:\n%s", out)
	}
	if strings.Contains(out, secret) {
		t.Errorf("the password reached the output:\n%s", out)
	}
}

func TestBadFlags(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"error rate":         {[]string{"--error-rate", "2"}, "error rate 2: want 0..1"},
		"cert without key":   {[]string{"--tls-cert", "x.pem"}, "--tls-cert and --tls-key go together"},
		"self-signed + cert": {[]string{"--tls-self-signed", "--tls-cert", "a", "--tls-key", "b"}, "excludes"},
		"positional":         {[]string{"extra"}, "unexpected arguments: extra"},
		"negative systems":   {[]string{"--systems", "-3"}, "systems -3"},
		"bad listen":         {[]string{"--listen", "nope"}, "nope"},
		"control not local":  {[]string{"--listen", "127.0.0.1:0", "--control-listen", "0.0.0.0:0"}, "give a loopback address"},
		"unknown quirk":      {[]string{"--quirks", "no-sessions,slow"}, `--quirks: unknown quirk "slow"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr syncBuffer
			code := run(context.Background(), append([]string{"rivet-sim"}, tc.args...), &stdout, &stderr)
			if code != 1 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr.String(), tc.want)
			}
		})
	}
}

// TestControlEndpoint sets a system's fault through the control endpoint,
// sees the Redfish service answer with it and count the requests, and
// clears it; the other systems are untouched.
func TestControlEndpoint(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"rivet-sim", "--listen", "127.0.0.1:0", "--systems", "2", "--control-listen", "127.0.0.1:0"}, &stdout, &stderr)
	}()
	var base, control string
	for deadline := time.Now().Add(5 * time.Second); control == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		base = regexp.MustCompile(`http://127\.0\.0\.1:\d+/redfish/v1/`).FindString(stdout.String())
		control = regexp.MustCompile(`http://127\.0\.0\.1:\d+/faults/`).FindString(stdout.String())
	}
	if base == "" || control == "" {
		t.Fatalf("no URLs printed; stdout %q stderr %q", stdout.String(), stderr.String())
	}
	do := func(method, url, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.SetBasicAuth("admin", "password")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(res.Body)
		return res.StatusCode, b.String()
	}
	if code, body := do(http.MethodPut, control+"node-1", `{"status_500":true}`); code != http.StatusNoContent {
		t.Fatalf("PUT fault: %d %s", code, body)
	}
	for id, want := range map[string]int{"node-0": http.StatusOK, "node-1": http.StatusInternalServerError} {
		if code, _ := do(http.MethodGet, base+"Systems/"+id, ""); code != want {
			t.Errorf("GET %s: %d, want %d", id, code, want)
		}
	}
	if code, body := do(http.MethodGet, control+"node-1", ""); code != http.StatusOK ||
		!strings.Contains(body, `"status_500":true`) || !strings.Contains(body, `"requests":1`) {
		t.Errorf("GET fault: %d %s", code, body)
	}
	for body, want := range map[string]int{`{"hang":"yes"}`: 400, `{"latency":"-1s"}`: 400, `{"bogus":1}`: 400} {
		if code, _ := do(http.MethodPut, control+"node-1", body); code != want {
			t.Errorf("PUT %s: %d, want %d", body, code, want)
		}
	}
	if code, _ := do(http.MethodPut, control+"node-9", `{"hang":true}`); code != http.StatusNotFound {
		t.Errorf("PUT on an unknown system: %d", code)
	}
	if code, _ := do(http.MethodDelete, control+"node-1", ""); code != http.StatusNoContent {
		t.Errorf("DELETE fault: %d", code)
	}
	if code, _ := do(http.MethodGet, base+"Systems/node-1", ""); code != http.StatusOK {
		t.Errorf("GET node-1 after clearing: %d", code)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d; stderr %q", code, stderr.String())
	}
}
