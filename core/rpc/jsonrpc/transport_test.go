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
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/version"

	"github.com/rivetmetal/rivet/core/rpc"
)

// captured is a request as a conductor reads it.
type captured struct {
	Method, RequestURI, Host, Proto string
	ContentLength                   int64
	Header                          http.Header
	Body                            string
}

func captureRequest(t *testing.T, tr *HTTPTransport, req *rpc.Request) captured {
	t.Helper()
	got := make(chan captured, 1)
	rc := startRawConductor(t, func(t *testing.T, _ int, c net.Conn, br *bufio.Reader) {
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		body, _ := io.ReadAll(r.Body)
		h := r.Header.Clone()
		got <- captured{r.Method, r.RequestURI, r.Host, r.Proto, r.ContentLength, h, string(body)}
		reply := `{"jsonrpc":"2.0","result":null,"id":null}`
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(reply), reply)
	})
	if _, err := tr.Send(context.Background(), rc.ln.Addr().String(), req); err != nil {
		t.Fatal(err)
	}
	return <-got
}

// TestHTTPTransportRequest checks the request a conductor reads: a POST
// of the JSON-RPC envelope to /, Content-Type, Content-Length, http_basic
// credentials when configured, Idempotency-Key with the request id (so
// net/http may resend it), a call id on calls only, and no
// Accept-Encoding (conductors do not compress).
func TestHTTPTransportRequest(t *testing.T) {
	for _, opts := range []HTTPTransportOptions{{}, {Username: "rpc", Password: "s3cret:x"}} {
		for _, req := range []*rpc.Request{
			{Method: "create_node", Version: "1.3", RequestID: "req-0c6b1f9e-8d0c-4bd5-9a1a-f1f1f1f1f1f1",
				Params: map[string]json.RawMessage{"node_obj": json.RawMessage(`{"a":[1,2,{"b":"c"}]}`)}},
			{Method: "power", Version: "1.0", Params: map[string]json.RawMessage{"node_id": json.RawMessage(`"n1"`)}}, // no request id
			{Method: "power", Version: "1.0", RequestID: "r1", Cast: true, Params: map[string]json.RawMessage{"x": json.RawMessage(`"<&>"`)}},
		} {
			got := captureRequest(t, NewHTTPTransport(opts), req)
			wantBody, err := requestBody(req)
			if err != nil {
				t.Fatal(err)
			}
			if got.Method != http.MethodPost || got.RequestURI != "/" || got.Proto != "HTTP/1.1" || !strings.HasPrefix(got.Host, "127.0.0.1:") {
				t.Errorf("%s %s %s, Host %q", got.Method, got.RequestURI, got.Proto, got.Host)
			}
			if got.Body != string(wantBody) || got.ContentLength != int64(len(wantBody)) {
				t.Errorf("body %q (Content-Length %d), want %s", got.Body, got.ContentLength, wantBody)
			}
			if ct := got.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if ae, ok := got.Header["Accept-Encoding"]; ok {
				t.Errorf("Accept-Encoding %q sent", ae)
			}
			r := &http.Request{Header: got.Header}
			user, pass, ok := r.BasicAuth()
			if ok != (opts.Username != "") || user != opts.Username || pass != opts.Password {
				t.Errorf("basic auth %q:%q (%v), want %q:%q", user, pass, ok, opts.Username, opts.Password)
			}
			if key, ok := got.Header["Idempotency-Key"]; ok != (req.RequestID != "") || ok && key[0] != req.RequestID {
				t.Errorf("Idempotency-Key %q for request id %q", key, req.RequestID)
			}
			// Each Send makes its own call id; a cast has none.
			ids := got.Header[CallIDHeader]
			if req.Cast != (len(ids) == 0) || len(ids) > 1 || len(ids) == 1 && !callIDPattern.MatchString(ids[0]) {
				t.Errorf("%s %v for cast=%v, want one of 32 hex digits on a call only", CallIDHeader, ids, req.Cast)
			}
		}
	}
}

// TestHTTPTransportReplies calls a conductor's real handler:
// small replies come with Content-Length, large ones chunked; 204 for a
// cast; errors as JSON-RPC errors; MaxResponseBytes holds.
func TestHTTPTransportReplies(t *testing.T) {
	hs := httptest.NewServer(NewHTTPHandler(testServer(t, nil), HTTPHandlerOptions{}))
	defer hs.Close()
	host := hs.Listener.Addr().String()
	for _, size := range []int{10, 1500, 5000, 100000} {
		{
			tr := NewHTTPTransport(HTTPTransportOptions{})

			c := rpc.NewClient(newTable(t), func() version.Version { return v("1.1") }, rpc.PlainCodec{}, tr)
			id := strings.Repeat("n", size)
			for range 3 { // the same kept-alive connection
				r, err := c.Call(context.Background(), host, "power", map[string]any{"node_id": id})
				if err != nil {
					t.Fatal(err)
				}
				var out map[string]string
				if err := r.Decode(&out); err != nil || out["node"] != id {
					t.Fatalf("reply %.80s, %v", r.Raw(), err)
				}
			}
			if err := c.Cast(context.Background(), host, "clean", map[string]any{"node_id": "n1"}); err != nil {
				t.Fatalf("cast: %v", err)
			}
			_, err := c.Call(context.Background(), host, "power", map[string]any{"node_id": "locked"})
			var re *rpc.RemoteError
			if !errors.As(err, &re) || re.Class != "NodeLocked" {
				t.Fatalf("err = %v", err)
			}
		}
	}
	{
		tr := NewHTTPTransport(HTTPTransportOptions{MaxResponseBytes: 1000})

		c := rpc.NewClient(newTable(t), func() version.Version { return v("1.1") }, rpc.PlainCodec{}, tr)
		for _, size := range []int{1000, 5000} { // Content-Length, chunked
			_, err := c.Call(context.Background(), host, "power", map[string]any{"node_id": strings.Repeat("n", size)})
			if err == nil || !strings.Contains(err.Error(), "reply larger than 1000 bytes") {
				t.Fatalf("%d: err = %v", size, err)
			}
		}
		if _, err := c.Call(context.Background(), host, "power", map[string]any{"node_id": "n1"}); err != nil {
			t.Fatalf("after an oversize reply: %v", err)
		}
	}
}

// rawAnswer is a conductor that reads each request and writes answer.
func rawAnswer(t *testing.T, answer string) *rawConductor {
	return startRawConductor(t, func(t *testing.T, _ int, c net.Conn, br *bufio.Reader) {
		for {
			r, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, r.Body)
			if _, err := io.WriteString(c, answer); err != nil {
				return
			}
		}
	})
}

// TestHTTPTransportErrors checks how each failure is classified: a
// refused dial is unreachable (another conductor may take the call), a
// timeout or cancellation is not, and neither is a malformed answer.
func TestHTTPTransportErrors(t *testing.T) {
	call := keepaliveCall("req-1")
	t.Run("refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		host := ln.Addr().String()
		ln.Close()
		{
			tr := NewHTTPTransport(HTTPTransportOptions{})

			_, err := tr.Send(context.Background(), host, call)
			var ue *rpc.UnreachableError
			if !errors.Is(err, rpc.ErrUnreachable) || !errors.As(err, &ue) || ue.Host != host {
				t.Fatalf("err = %v, want UnreachableError", err)
			}
		}
	})
	hang := func(t *testing.T) string {
		rc := startRawConductor(t, func(t *testing.T, _ int, c net.Conn, br *bufio.Reader) {
			if r, err := http.ReadRequest(br); err == nil {
				_, _ = io.Copy(io.Discard, r.Body)
				_, _ = br.Peek(1) // until the client hangs up
			}
		})
		return rc.ln.Addr().String()
	}
	t.Run("timeout option", func(t *testing.T) {
		{
			tr := NewHTTPTransport(HTTPTransportOptions{Timeout: 200 * time.Millisecond})

			start := time.Now()
			_, err := tr.Send(context.Background(), hang(t), call)
			var ne net.Error
			if errors.Is(err, rpc.ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("err = %v, want a timeout", err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("took %v", d)
			}
		}
	})
	t.Run("ctx cancelled", func(t *testing.T) {
		{
			tr := NewHTTPTransport(HTTPTransportOptions{Timeout: time.Minute})

			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			_, err := tr.Send(ctx, hang(t), call)
			if errors.Is(err, rpc.ErrUnreachable) || !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("took %v", d)
			}
		}
	})
	t.Run("ctx deadline", func(t *testing.T) {
		{
			tr := NewHTTPTransport(HTTPTransportOptions{Timeout: time.Minute})

			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_, err := tr.Send(ctx, hang(t), call)
			if errors.Is(err, rpc.ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want context.DeadlineExceeded", err)
			}
		}
	})
	t.Run("ctx cancelled before", func(t *testing.T) {
		{
			tr := NewHTTPTransport(HTTPTransportOptions{})

			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := tr.Send(ctx, hang(t), call)
			if errors.Is(err, rpc.ErrUnreachable) || !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
		}
	})
	for name, tc := range map[string]struct{ answer, want string }{
		"non-JSON 502":       {"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 5\r\n\r\nhello", "HTTP 502 with a body that is not JSON-RPC"},
		"JSON-RPC error 401": {httpAnswer("401 Unauthorized", `{"jsonrpc":"2.0","error":{"code":401,"message":"Unauthorized"},"id":null}`), "Unauthorized"},
		"garbage":            {"SSH-2.0-OpenSSH\r\n\r\n", "malformed HTTP response"},
		"bad chunking":       {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "chunk"},
		"empty 200":          {"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "HTTP 200 with a body that is not JSON-RPC"},
	} {
		t.Run(name, func(t *testing.T) {
			rc := rawAnswer(t, tc.answer)
			{
				tr := NewHTTPTransport(HTTPTransportOptions{})

				_, err := tr.Send(context.Background(), rc.ln.Addr().String(), call)
				if err == nil || errors.Is(err, rpc.ErrUnreachable) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want one with %q", err, tc.want)
				}
			}
		})
	}
}

// TestHTTPTransportConnectionReuse checks which connections go back to
// the pool: a reply read whole on HTTP/1.1 without Connection: close, and
// nothing after it.
func TestHTTPTransportConnectionReuse(t *testing.T) {
	const ok = `{"jsonrpc":"2.0","result":"ok","id":"req-1"}`
	for name, tc := range map[string]struct {
		answer string
		reuse  bool
	}{
		"keep-alive":       {fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(ok), ok), true},
		"chunked":          {fmt.Sprintf("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(ok), ok), true},
		"connection close": {fmt.Sprintf("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(ok), ok), false},
		"HTTP/1.0":         {fmt.Sprintf("HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(ok), ok), false},
		"extra bytes":      {fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%sHTTP/1.1", len(ok), ok), false},
	} {
		t.Run(name, func(t *testing.T) {
			rc := rawAnswer(t, tc.answer)
			tr := NewHTTPTransport(HTTPTransportOptions{})
			host := rc.ln.Addr().String()
			for i := range 3 {
				res, err := tr.Send(context.Background(), host, keepaliveCall("req-1"))
				if err != nil || string(res) != `"ok"` {
					t.Fatalf("call %d: %s, %v", i, res, err)
				}
			}
			want := 3
			if tc.reuse {
				want = 1
			}
			if got := rc.accepted(); got != want {
				t.Errorf("%d connections for 3 calls, want %d", got, want)
			}
		})
	}
}

// TestHTTPTransportResendRules checks a call is resent only when the
// conductor cannot have run it: see also
// TestHTTPTransportResendsWhenKeepAliveConnectionCloses and
// TestHTTPTransportResendLimits.
func TestHTTPTransportResendRules(t *testing.T) {
	ctx := context.Background()
	t.Run("response begun, then closed", func(t *testing.T) {
		// A byte of the response arrived: the conductor ran the call.
		rc := startRawConductorSelf(t, func(rc *rawConductor, t *testing.T, n int, c net.Conn, br *bufio.Reader) {
			if !rc.answer(t, c, br) {
				return
			}
			if _, err := http.ReadRequest(br); err == nil {
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\n")
			}
		})
		{
			tr := NewHTTPTransport(HTTPTransportOptions{})

			before := rc.accepted()
			host := rc.ln.Addr().String()
			if _, err := tr.Send(ctx, host, keepaliveCall("req-1")); err != nil {
				t.Fatal(err)
			}
			_, err := tr.Send(ctx, host, keepaliveCall("req-2"))
			if err == nil || errors.Is(err, rpc.ErrUnreachable) {
				t.Fatalf("err = %v, want a plain failure", err)
			}
			if got := rc.accepted() - before; got != 1 {
				t.Errorf("%d connections, want 1 (no resend)", got)
			}
		}
	})
	t.Run("idle connection closed, conductor gone", func(t *testing.T) {
		// The conductor answered, then stopped while the connection sat
		// idle: the closed connection is noticed before it is used, so the
		// next call meets a refused dial, unreachable, and the Router may
		// try another conductor.
		{
			tr := NewHTTPTransport(HTTPTransportOptions{})

			rc := startRawConductorSelf(t, func(rc *rawConductor, t *testing.T, n int, c net.Conn, br *bufio.Reader) {
				rc.answer(t, c, br)
				rc.ln.Close()
			})
			host := rc.ln.Addr().String()
			if _, err := tr.Send(ctx, host, keepaliveCall("req-1")); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond) // the FIN arrives
			_, err := tr.Send(ctx, host, keepaliveCall("req-2"))
			if !errors.Is(err, rpc.ErrUnreachable) {
				t.Fatalf("err = %v, want ErrUnreachable", err)
			}
		}
	})
	t.Run("idle connection closed, conductor up", func(t *testing.T) {
		{
			tr := NewHTTPTransport(HTTPTransportOptions{})

			rc := startRawConductorSelf(t, func(rc *rawConductor, t *testing.T, n int, c net.Conn, br *bufio.Reader) {
				rc.answer(t, c, br) // then close: one call per connection
			})
			host := rc.ln.Addr().String()
			for i := range 3 {
				if _, err := tr.Send(ctx, host, keepaliveCall(fmt.Sprint("req-", i))); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			rc.mu.Lock()
			defer rc.mu.Unlock()
			if len(rc.keys) != 3 {
				t.Errorf("conductor read %q, want each call once", rc.keys)
			}
		}
	})
}

// TestHTTPTransportIdleConnsPerHost checks that calls to one conductor
// keep maxIdleConnsPerHost connections open between them (net/http's
// default would keep 2 and dial again for nearly every concurrent call):
// after 40 concurrent calls, 32 concurrent calls open no connection.
func TestHTTPTransportIdleConnsPerHost(t *testing.T) {
	var (
		mu      sync.Mutex
		waiting int
		gate    = make(chan struct{})
		hold    = maxIdleConnsPerHost + 8 // calls held until all arrived
	)
	rc := startRawConductorSelf(t, func(rc *rawConductor, t *testing.T, n int, c net.Conn, br *bufio.Reader) {
		for {
			if _, err := br.Peek(1); err != nil {
				return
			}
			mu.Lock()
			waiting++
			if waiting == hold {
				close(gate)
			}
			g := gate
			mu.Unlock()
			<-g
			if !rc.answer(t, c, br) {
				return
			}
		}
	})
	tr := NewHTTPTransport(HTTPTransportOptions{})
	host := rc.ln.Addr().String()
	wave := func(calls int) {
		t.Helper()
		mu.Lock()
		waiting, hold, gate = 0, calls, make(chan struct{})
		mu.Unlock()
		var wg sync.WaitGroup
		errs := make(chan error, calls)
		for i := range calls {
			wg.Go(func() {
				_, err := tr.Send(context.Background(), host, keepaliveCall(fmt.Sprint("req-", i)))
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	wave(maxIdleConnsPerHost + 8)
	if got := rc.accepted(); got != maxIdleConnsPerHost+8 {
		t.Fatalf("%d connections for %d concurrent calls", got, maxIdleConnsPerHost+8)
	}
	wave(maxIdleConnsPerHost)
	if got := rc.accepted() - (maxIdleConnsPerHost + 8); got != 0 {
		t.Errorf("%d new connections for %d concurrent calls after the first wave, want 0 (idle ones reused)", got, maxIdleConnsPerHost)
	}
}

func httpAnswer(status, body string) string {
	return fmt.Sprintf("HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", status, len(body), body)
}

// TestHTTPTransportAgainstDrainingConductor runs calls from eight goroutines
// against a conductor's net/http server that turns keep-alives off and on
// again and again, then off, as a draining conductor does once (idle
// connections close, answers carry Connection: close): every call
// succeeds and runs once.
//
// Without the call id a call may run twice: http.Server's closeIdleConns
// can close a connection whose next request it has just read but not yet
// marked active; the handler then runs, its answer is lost, and the
// client, having read no byte of a response on a reused connection,
// resends (net/http's rule for a request with an Idempotency-Key). The
// conductor's reply cache answers the resend with the first run's reply
// (CallIDHeader). Turning keep-alives off repeatedly makes the race common
// enough that a run without the cache fails.
func TestHTTPTransportAgainstDrainingConductor(t *testing.T) {
	{
		tr := NewHTTPTransport(HTTPTransportOptions{Timeout: 10 * time.Second})

		const workers, perWorker = 8, 150
		seen := make(chan string, 2*workers*perWorker)
		hs := httptest.NewServer(NewHTTPHandler(testServer(t, seen), HTTPHandlerOptions{}))
		defer hs.Close()
		host := hs.Listener.Addr().String()
		c := rpc.NewClient(newTable(t), func() version.Version { return v("1.1") }, rpc.PlainCodec{}, tr)
		var wg sync.WaitGroup
		errs := make(chan error, workers*perWorker)
		stop := make(chan struct{})
		toggled := make(chan int)
		go func() {
			n := 0
			defer func() { toggled <- n }()
			for {
				select {
				case <-stop:
					hs.Config.SetKeepAlivesEnabled(false)
					return
				default:
				}
				hs.Config.SetKeepAlivesEnabled(false) // closes idle connections
				hs.Config.SetKeepAlivesEnabled(true)
				n++
				time.Sleep(200 * time.Microsecond)
			}
		}()
		for w := range workers {
			wg.Go(func() {
				for i := range perWorker {
					ctx := rpc.WithRequestID(context.Background(), fmt.Sprintf("req-%d-%d", w, i))
					if _, err := c.Call(ctx, host, "power", map[string]any{"node_id": "n1"}); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(stop)
		t.Logf("keep-alives turned off %d times", <-toggled)
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		close(seen)
		count := map[string]int{}
		for id := range seen {
			count[id]++
		}
		if len(count) != workers*perWorker {
			t.Errorf("%d distinct calls ran, want %d", len(count), workers*perWorker)
		}
		twice := 0
		for _, n := range count {
			if n > 1 {
				twice++
			}
		}
		if twice > 0 {
			t.Errorf("%d of %d calls ran twice (the server closed them as idle after reading them)", twice, len(count))
		}
	}
}
