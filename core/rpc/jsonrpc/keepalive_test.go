package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rivetmetal/rivet/core/rpc"
)

// rawConductor is a JSON-RPC peer on a raw TCP listener, so a test decides
// exactly when a connection closes. onConn runs for each accepted
// connection with its sequence number (1-based).
type rawConductor struct {
	ln     net.Listener
	mu     sync.Mutex
	conns  int
	open   []net.Conn
	keys   []string // Idempotency-Key of each request answered
	wg     sync.WaitGroup
	onConn func(t *testing.T, n int, c net.Conn, br *bufio.Reader)
}

func startRawConductor(t *testing.T, onConn func(t *testing.T, n int, c net.Conn, br *bufio.Reader)) *rawConductor {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rc := &rawConductor{ln: ln, onConn: onConn}
	rc.wg.Add(1)
	go func() {
		defer rc.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			rc.mu.Lock()
			rc.conns++
			n := rc.conns
			rc.open = append(rc.open, c)
			rc.mu.Unlock()
			rc.wg.Add(1)
			go func() {
				defer rc.wg.Done()
				defer c.Close()
				rc.onConn(t, n, c, bufio.NewReader(c))
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		rc.mu.Lock()
		for _, c := range rc.open {
			c.Close() // ends answer loops waiting on a kept-alive connection
		}
		rc.mu.Unlock()
		rc.wg.Wait()
	})
	return rc
}

// startRawConductorSelf is startRawConductor for an onConn that uses the
// conductor itself.
func startRawConductorSelf(t *testing.T, onConn func(rc *rawConductor, t *testing.T, n int, c net.Conn, br *bufio.Reader)) *rawConductor {
	var self atomic.Pointer[rawConductor]
	rc := startRawConductor(t, func(t *testing.T, n int, c net.Conn, br *bufio.Reader) {
		onConn(self.Load(), t, n, c, br)
	})
	self.Store(rc) // before any call: no connection arrives earlier
	return rc
}

func (rc *rawConductor) accepted() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.conns
}

// answer reads one request from br and answers it with keep-alive; it
// reports false when the peer closed the connection.
func (rc *rawConductor) answer(t *testing.T, c net.Conn, br *bufio.Reader) bool {
	req, err := http.ReadRequest(br)
	if err != nil {
		return false
	}
	var env struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.NewDecoder(req.Body).Decode(&env); err != nil {
		t.Errorf("raw conductor: decode request: %v", err)
		return false
	}
	_, _ = io.Copy(io.Discard, req.Body)
	rc.mu.Lock()
	rc.keys = append(rc.keys, req.Header.Get("Idempotency-Key"))
	rc.mu.Unlock()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","result":"ok","id":%s}`, env.ID)
	_, err = fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	return err == nil
}

func keepaliveCall(id string) *rpc.Request {
	return &rpc.Request{Method: "power", Version: "1.0", RequestID: id, Params: map[string]json.RawMessage{}}
}

// TestHTTPTransportResendsWhenKeepAliveConnectionCloses reproduces the race
// a draining conductor causes: the client sends a call on a kept-alive
// connection just as the conductor closes it, before reading the call. The
// call must go again on a fresh connection, once.
func TestHTTPTransportResendsWhenKeepAliveConnectionCloses(t *testing.T) {
	rc := startRawConductorSelf(t, func(rc *rawConductor, t *testing.T, n int, c net.Conn, br *bufio.Reader) {
		if n == 1 {
			if !rc.answer(t, c, br) {
				return
			}
			// The next call has arrived on this connection; close it
			// unanswered, as http.Server closes a connection it counts
			// as idle.
			_, _ = br.Peek(1)
			return
		}
		for rc.answer(t, c, br) {
		}
	})
	tr := NewHTTPTransport(HTTPTransportOptions{})
	ctx := context.Background()
	host := rc.ln.Addr().String()
	if _, err := tr.Send(ctx, host, keepaliveCall("req-1")); err != nil {
		t.Fatalf("first call: %v", err)
	}
	res, err := tr.Send(ctx, host, keepaliveCall("req-2"))
	if err != nil {
		t.Fatalf("call on a connection closed as idle was not resent: %v", err)
	}
	if string(res) != `"ok"` {
		t.Errorf("result = %s", res)
	}
	if got := rc.accepted(); got != 2 {
		t.Errorf("conductor accepted %d connections, want 2 (the first and one fresh one)", got)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.keys) != 2 || rc.keys[0] != "req-1" || rc.keys[1] != "req-2" {
		t.Errorf("Idempotency-Key headers = %q, want the request ids", rc.keys)
	}
}

// TestHTTPTransportResendLimits checks what is not resent, or not called
// unreachable, because the conductor may have acted on it.
func TestHTTPTransportResendLimits(t *testing.T) {
	ctx := context.Background()
	t.Run("fresh connection closed unanswered", func(t *testing.T) {
		rc := startRawConductor(t, func(t *testing.T, _ int, _ net.Conn, br *bufio.Reader) {
			_, _ = http.ReadRequest(br) // read, then "crash"
		})
		_, err := NewHTTPTransport(HTTPTransportOptions{}).Send(ctx, rc.ln.Addr().String(), keepaliveCall("req-1"))
		if err == nil || errors.Is(err, rpc.ErrUnreachable) {
			t.Fatalf("err = %v, want a failure that is not ErrUnreachable", err)
		}
		if got := rc.accepted(); got != 1 {
			t.Errorf("conductor accepted %d connections, want 1 (no resend on a fresh connection)", got)
		}
	})
	t.Run("resend finds the conductor gone", func(t *testing.T) {
		rc := startRawConductorSelf(t, func(rc *rawConductor, t *testing.T, n int, c net.Conn, br *bufio.Reader) {
			if !rc.answer(t, c, br) {
				return
			}
			// The call is here; the process "dies": listener and
			// connection close together.
			_, _ = br.Peek(1)
			rc.ln.Close()
		})
		tr := NewHTTPTransport(HTTPTransportOptions{})
		host := rc.ln.Addr().String()
		if _, err := tr.Send(ctx, host, keepaliveCall("req-1")); err != nil {
			t.Fatalf("first call: %v", err)
		}
		_, err := tr.Send(ctx, host, keepaliveCall("req-2"))
		if err == nil || errors.Is(err, rpc.ErrUnreachable) {
			t.Fatalf("err = %v, want a failure that is not ErrUnreachable: the call was written, so the Router must not run it elsewhere", err)
		}
	})
	t.Run("nothing listening is unreachable", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		host := ln.Addr().String()
		ln.Close()
		_, err = NewHTTPTransport(HTTPTransportOptions{}).Send(ctx, host, keepaliveCall("req-1"))
		if !errors.Is(err, rpc.ErrUnreachable) {
			t.Fatalf("err = %v, want ErrUnreachable", err)
		}
	})
	// Issue 31: a conductor registered as "cond1.example.com   # comment"
	// made every call a bare error (a 500 at the API).
	t.Run("a registered name that is no host name is unreachable", func(t *testing.T) {
		_, err := NewHTTPTransport(HTTPTransportOptions{}).Send(ctx, "cond1 # unique", keepaliveCall("req-1"))
		var ue *rpc.UnreachableError
		if !errors.As(err, &ue) || ue.Host != "cond1 # unique" || !strings.Contains(err.Error(), "is not a valid host name") {
			t.Fatalf("err = %v, want an UnreachableError naming the host", err)
		}
	})
}

// TestDispatchRecoversPanic checks a panicking handler answers an error
// instead of closing the connection unanswered (which the client would
// take for a call never read and resend).
func TestDispatchRecoversPanic(t *testing.T) {
	s := rpc.NewServer(newTable(t), rpc.PlainCodec{}, quietLog(), context.Background())
	s.Handle("power", func(context.Context, rpc.Params) (any, error) { panic("boom") })
	_, err := s.Dispatch(context.Background(), &rpc.Request{Method: "power", Version: "1.0",
		Params: map[string]json.RawMessage{"node_id": json.RawMessage(`"n1"`)}})
	if err == nil {
		t.Fatal("Dispatch of a panicking handler returned no error")
	}
	if class, code, _ := rpc.ErrorToWire(err); class != "InternalError" || code != http.StatusInternalServerError {
		t.Errorf("panic became %s/%d, want InternalError/500", class, code)
	}
}
