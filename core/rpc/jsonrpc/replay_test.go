package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/version"

	"github.com/rivetmetal/rivet/core/rpc"
)

// callIDPattern is the call id HTTPTransport sends.
var callIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// TestCallIDKeptOnResend checks the client side (a new API against any
// conductor): each call carries its own call id, and the resend of a call
// whose connection closed after the conductor read it carries the same
// one; a cast carries none.
func TestCallIDKeptOnResend(t *testing.T) {
	tr := NewHTTPTransport(HTTPTransportOptions{})
	var mu sync.Mutex
	var ids []string // call id of each request the conductor read
	read := func(br *bufio.Reader) (*http.Request, bool) {
		r, err := http.ReadRequest(br)
		if err != nil {
			return nil, false
		}
		mu.Lock()
		ids = append(ids, r.Header.Get(CallIDHeader))
		mu.Unlock()
		_, _ = io.Copy(io.Discard, r.Body)
		return r, true
	}
	ok := func(c net.Conn) bool {
		const body = `{"jsonrpc":"2.0","result":"ok","id":"x"}`
		_, err := fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		return err == nil
	}
	rc := startRawConductor(t, func(t *testing.T, n int, c net.Conn, br *bufio.Reader) {
		if n == 1 {
			// Answer the first call, then read the second and close
			// unanswered, as http.Server's closeIdleConns may.
			if _, got := read(br); got && ok(c) {
				read(br)
			}
			return
		}
		for {
			if _, got := read(br); !got || !ok(c) {
				return
			}
		}
	})
	host := rc.ln.Addr().String()
	ctx := context.Background()
	for _, id := range []string{"req-1", "req-2"} {
		if _, err := tr.Send(ctx, host, keepaliveCall(id)); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	cast := keepaliveCall("req-3")
	cast.Cast = true
	if _, err := tr.Send(ctx, host, cast); err != nil {
		t.Fatalf("cast: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ids) != 4 {
		t.Fatalf("conductor read %d requests (%q), want 4: call, call, its resend, cast", len(ids), ids)
	}
	for _, id := range ids[:3] {
		if !callIDPattern.MatchString(id) {
			t.Errorf("call id %q, want 32 hex digits", id)
		}
	}
	if ids[0] == ids[1] || ids[1] != ids[2] {
		t.Errorf("call ids %q: want a new one per call, the same on its resend", ids[:3])
	}
	if ids[3] != "" {
		t.Errorf("cast carries call id %q", ids[3])
	}
}

// countingServer is a conductor whose "power" handler counts how often
// each node_id ran; block, when set, holds the handler until it closes
// (started is told first).
type countingServer struct {
	mu      sync.Mutex
	runs    map[string]int
	block   chan struct{}
	started chan struct{}
	// ctxErr is the call context's error once the handler ran.
	ctxErr atomic.Value
}

func newCountingServer(t testing.TB) (*countingServer, *httpHandler) {
	cs := &countingServer{runs: map[string]int{}}
	s := rpc.NewServer(newTable(t), rpc.PlainCodec{}, quietLog(), context.Background())
	s.Handle("power", func(ctx context.Context, p rpc.Params) (any, error) {
		id, _ := p.String("node_id")
		cs.mu.Lock()
		cs.runs[id]++
		n := cs.runs[id]
		cs.mu.Unlock()
		if cs.block != nil {
			cs.started <- struct{}{}
			select {
			case <-cs.block:
			case <-ctx.Done():
			}
			cs.ctxErr.Store(fmt.Sprint(ctx.Err()))
		}
		if id == "locked" {
			return nil, &nodeLocked{msg: "Node locked is locked"}
		}
		return map[string]any{"node": id, "run": n}, nil
	})
	s.Handle("clean", func(_ context.Context, p rpc.Params) (any, error) {
		id, _ := p.String("node_id")
		cs.mu.Lock()
		cs.runs["clean:"+id]++
		cs.mu.Unlock()
		return nil, nil
	})
	return cs, NewHTTPHandler(s, HTTPHandlerOptions{Log: quietLog()}).(*httpHandler)
}

func (cs *countingServer) count(id string) int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.runs[id]
}

// rawPost posts body with the given call id header values (none: no
// header) and returns the status and reply body.
func rawPost(ctx context.Context, t *testing.T, url, body string, callIDs ...string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if len(callIDs) > 0 {
		req.Header[CallIDHeader] = callIDs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), err
}

func powerBody(node string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":"req-%s","method":"power","params":{"node_id":%q,"rpc.version":"1.0","context":{"request_id":"req-%s"}}}`, node, node, node)
}

// TestReplayCacheRunsCallOnce checks the conductor side: a call sent
// twice with one call id runs once and both copies get the same reply
// bytes, an error reply included; without the header, or with one the
// conductor does not key on (an API that predates it, a malformed
// value), each copy runs, as before the header existed; a cast is never
// cached.
func TestReplayCacheRunsCallOnce(t *testing.T) {
	cs, h := newCountingServer(t)
	hs := httptest.NewServer(h)
	defer hs.Close()
	ctx := context.Background()
	const id = "0123456789abcdef0123456789abcdef"
	for name, tc := range map[string]struct {
		node    string
		callIDs []string
		runs    int
		before  string // a node whose call goes first with the same id
	}{
		"call id":               {"n1", []string{id}, 1, ""},
		"call id, error reply":  {"locked", []string{"locked-call-0000000000"}, 1, ""},
		"uuid call id":          {"n2", []string{"7d0c3f4e-0b5c-4a43-9a59-2d8a1e9b6c11"}, 1, ""},
		"no header (old API)":   {"n3", nil, 2, ""},
		"empty":                 {"n4", []string{""}, 2, ""},
		"too short":             {"n5", []string{"abc"}, 2, ""},
		"too long":              {"n6", []string{strings.Repeat("a", 65)}, 2, ""},
		"bad byte":              {"n7", []string{"0123456789abcdef 0123456789abcdef"}, 2, ""},
		"two values":            {"n8", []string{"0123456789abcdef0", "0123456789abcdef0"}, 2, ""},
		"same id, another body": {"n9", []string{"reused-0123456789abcdef"}, 2, "n10"},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.before != "" {
				if status, _, err := rawPost(ctx, t, hs.URL, powerBody(tc.before), tc.callIDs...); err != nil || status != http.StatusOK {
					t.Fatalf("status %d, %v", status, err)
				}
			}
			var replies []string
			for range 2 {
				status, reply, err := rawPost(ctx, t, hs.URL, powerBody(tc.node), tc.callIDs...)
				if err != nil || status != http.StatusOK {
					t.Fatalf("status %d, %v", status, err)
				}
				replies = append(replies, reply)
			}
			if got := cs.count(tc.node); got != tc.runs {
				t.Errorf("call ran %d times, want %d", got, tc.runs)
			}
			if tc.runs == 1 && replies[0] != replies[1] {
				t.Errorf("replies differ:\n%s\n%s", replies[0], replies[1])
			}
			if tc.node == "locked" && !strings.Contains(replies[1], "NodeLocked") {
				t.Errorf("reply %s, want the NodeLocked error", replies[1])
			}
		})
	}
	t.Run("cast", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","method":"clean","params":{"node_id":"c1","rpc.version":"1.0"}}`
		for range 2 {
			if status, reply, err := rawPost(ctx, t, hs.URL, body, "cast-call-id-00000000"); err != nil || status != http.StatusNoContent {
				t.Fatalf("status %d %s, %v", status, reply, err)
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for cs.count("clean:c1") < 2 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if got := cs.count("clean:c1"); got != 2 {
			t.Errorf("cast ran %d times, want 2 (casts are not cached)", got)
		}
	})
}

// TestReplayCacheInFlightDuplicate checks a copy arriving while the
// first runs: it waits and gets the first's reply, and the call runs on
// although the first copy's connection went away (that is how the first
// copy is lost); with no copy arriving, the call's context ends after the
// grace period.
func TestReplayCacheInFlightDuplicate(t *testing.T) {
	for name, resend := range map[string]bool{"resent": true, "not resent": false} {
		t.Run(name, func(t *testing.T) {
			cs, h := newCountingServer(t)
			cs.block, cs.started = make(chan struct{}), make(chan struct{}, 1)
			h.replay.grace = 50 * time.Millisecond
			hs := httptest.NewServer(h)
			defer hs.Close()
			const id = "inflight-0123456789abcdef"
			body := powerBody("n1")

			// The first copy: its client gives up (its connection closes)
			// while the call runs.
			ctx1, cancel1 := context.WithCancel(context.Background())
			first := make(chan error, 1)
			go func() {
				_, _, err := rawPost(ctx1, t, hs.URL, body, id)
				first <- err
			}()
			<-cs.started
			cancel1()
			if err := <-first; !errors.Is(err, context.Canceled) {
				t.Fatalf("first copy: %v", err)
			}
			if !resend {
				// Nobody waits: after grace the call's context ends,
				// which ends the handler.
				waitIdle(t, h.replay)
				close(cs.block)
				if got := cs.ctxErr.Load(); got != context.Canceled.Error() {
					t.Errorf("call context error %v, want %v after grace", got, context.Canceled)
				}
				return
			}
			second := make(chan string, 1)
			go func() {
				status, reply, err := rawPost(context.Background(), t, hs.URL, body, id)
				if err != nil || status != http.StatusOK {
					t.Errorf("second copy: %d, %v", status, err)
				}
				second <- reply
			}()
			waitWaiters(t, h.replay, id, 1)
			time.Sleep(100 * time.Millisecond) // past grace: the waiter holds the call alive
			close(cs.block)
			reply := <-second
			if !strings.Contains(reply, `"run":1`) || cs.count("n1") != 1 {
				t.Errorf("reply %s after %d runs, want the first run's", reply, cs.count("n1"))
			}
			if got := cs.ctxErr.Load(); got != "<nil>" {
				t.Errorf("call context error %v, want none: a copy was waiting", got)
			}
		})
	}
}

// waitWaiters waits until the running call id has n waiters.
func waitWaiters(t *testing.T, c *replayCache, id string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		e := c.calls[id]
		got := e != nil && e.waiters == n
		c.mu.Unlock()
		if got {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("call %s never had %d waiters", id, n)
}

// waitIdle waits until no call runs in c.
func waitIdle(t *testing.T, c *replayCache) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		running := 0
		for _, e := range c.calls {
			if !e.finished {
				running++
			}
		}
		c.mu.Unlock()
		if running == 0 {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatal("a call is still running")
}

// TestReplayCacheBounds checks eviction: oldest first past the entry and
// byte bounds, and after ttl; a large reply is given to the copies
// waiting for it but not kept.
func TestReplayCacheBounds(t *testing.T) {
	run := func(c *replayCache, id string, reply []byte) {
		e, owner := c.join(id, []byte(id))
		if !owner {
			t.Fatalf("%s: not the owner", id)
		}
		c.start(e, context.Background())
		c.finish(e, reply)
	}
	kept := func(c *replayCache, id string) bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.calls[id] != nil
	}
	t.Run("entries", func(t *testing.T) {
		c := newReplayCache()
		c.maxEntries = 3
		for i := range 5 {
			run(c, fmt.Sprint("id-", i), []byte("r"))
		}
		for i, want := range []bool{false, false, true, true, true} {
			if got := kept(c, fmt.Sprint("id-", i)); got != want {
				t.Errorf("id-%d kept = %v, want %v", i, got, want)
			}
		}
	})
	t.Run("bytes", func(t *testing.T) {
		c := newReplayCache()
		c.maxBytes = 25
		for i := range 4 {
			run(c, fmt.Sprint("id-", i), bytes.Repeat([]byte("r"), 10))
		}
		if entries, n := c.size(); entries != 2 || n != 20 {
			t.Errorf("%d entries, %d bytes; want the newest 2, 20 bytes", entries, n)
		}
		if !kept(c, "id-3") || kept(c, "id-1") {
			t.Error("not the newest kept")
		}
	})
	t.Run("large reply", func(t *testing.T) {
		c := newReplayCache()
		c.maxReply = 10
		e, _ := c.join("big", []byte("b"))
		c.start(e, context.Background())
		w, owner := c.join("big", []byte("b")) // a copy waiting
		if owner || w != e {
			t.Fatal("copy does not share the entry")
		}
		c.finish(e, bytes.Repeat([]byte("r"), 11))
		<-w.ready
		if len(w.reply) != 11 || kept(c, "big") {
			t.Errorf("waiter got %d bytes, kept = %v; want 11, not kept", len(w.reply), kept(c, "big"))
		}
	})
	t.Run("ttl", func(t *testing.T) {
		c := newReplayCache()
		c.ttl = 20 * time.Millisecond
		run(c, "old", []byte("r"))
		deadline := time.Now().Add(10 * time.Second)
		for kept(c, "old") && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if entries, n := c.size(); entries != 0 || n != 0 {
			t.Errorf("%d entries, %d bytes after ttl with no traffic, want none", entries, n)
		}
		run(c, "new", []byte("r")) // the sweep arms again
		for kept(c, "new") && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if kept(c, "new") {
			t.Error("second entry not expired")
		}
	})
	t.Run("another body", func(t *testing.T) {
		c := newReplayCache()
		run(c, "id", []byte("r"))
		if e, owner := c.join("id", []byte("another")); e != nil || owner {
			t.Error("a request reusing an id with another body got the entry")
		}
	})
}

// TestNewClientOldConductor checks a new API against a conductor that
// predates the call id (its handler without the reply cache, which reads
// no header it does not know): calls and casts work, and
// a call sent twice runs twice, as it always did there.
func TestNewClientOldConductor(t *testing.T) {
	cs, h := newCountingServer(t)
	h.replay = nil // as a conductor before the header
	hs := httptest.NewServer(h)
	defer hs.Close()
	host := hs.Listener.Addr().String()
	tr := NewHTTPTransport(HTTPTransportOptions{})
	c := rpc.NewClient(newTable(t), func() version.Version { return v("1.1") }, rpc.PlainCodec{}, tr)
	r, err := c.Call(context.Background(), host, "power", map[string]any{"node_id": "n1"})
	if err != nil || !strings.Contains(string(r.Raw()), `"node":"n1"`) {
		t.Fatalf("call: %s, %v", r.Raw(), err)
	}
	if err := c.Cast(context.Background(), host, "clean", map[string]any{"node_id": "n1"}); err != nil {
		t.Fatalf("cast: %v", err)
	}
	const id = "0123456789abcdef0123456789abcdef"
	for range 2 {
		if status, _, err := rawPost(context.Background(), t, hs.URL, powerBody("twice"), id); err != nil || status != http.StatusOK {
			t.Fatalf("status %d, %v", status, err)
		}
	}
	if got := cs.count("twice"); got != 2 {
		t.Errorf("old conductor ran the call %d times, want 2", got)
	}
}
