package rpc

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/version"
)

// netHTTPOnly turns t's lean path off: every call goes through net/http,
// as before the lean path.
func netHTTPOnly(t *HTTPTransport) *HTTPTransport {
	t.lean = nil
	return t
}

// bothTransports runs f with a transport of opts on the lean path and one
// on net/http: the two must behave the same.
func bothTransports(t *testing.T, opts HTTPTransportOptions, f func(t *testing.T, tr *HTTPTransport)) {
	t.Run("lean", func(t *testing.T) { f(t, NewHTTPTransport(opts)) })
	t.Run("net-http", func(t *testing.T) { f(t, netHTTPOnly(NewHTTPTransport(opts))) })
}

// captured is a request as a conductor reads it.
type captured struct {
	Method, RequestURI, Host, Proto string
	ContentLength                   int64
	Header                          http.Header
	Body                            string
}

func captureRequest(t *testing.T, tr *HTTPTransport, req *Request) captured {
	t.Helper()
	got := make(chan captured, 1)
	rc := startRawConductor(t, func(t *testing.T, _ int, c net.Conn, br *bufio.Reader) {
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		body, _ := io.ReadAll(r.Body)
		h := r.Header.Clone()
		h.Del("Accept-Encoding") // net/http's transport asks for gzip, the lean path does not
		got <- captured{r.Method, r.RequestURI, r.Host, r.Proto, r.ContentLength, h, string(body)}
		reply := `{"jsonrpc":"2.0","result":null,"id":null}`
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(reply), reply)
	})
	if _, err := tr.Send(context.Background(), rc.ln.Addr().String(), req); err != nil {
		t.Fatal(err)
	}
	return <-got
}

// TestLeanRequestMatchesNetHTTP checks the lean path writes the request
// net/http writes, as a conductor reads it, but for Accept-Encoding.
func TestLeanRequestMatchesNetHTTP(t *testing.T) {
	for _, opts := range []HTTPTransportOptions{{}, {Username: "rpc", Password: "s3cret:x"}} {
		for _, req := range []*Request{
			{Method: "create_node", Version: "1.3", RequestID: "req-0c6b1f9e-8d0c-4bd5-9a1a-f1f1f1f1f1f1",
				Params: map[string]json.RawMessage{"node_obj": json.RawMessage(`{"a":[1,2,{"b":"c"}]}`)}},
			{Method: "power", Version: "1.0", Params: map[string]json.RawMessage{"node_id": json.RawMessage(`"n1"`)}}, // no request id
			{Method: "power", Version: "1.0", RequestID: "r1", Cast: true, Params: map[string]json.RawMessage{"x": json.RawMessage(`"<&>"`)}},
		} {
			lean := captureRequest(t, NewHTTPTransport(opts), req)
			std := captureRequest(t, netHTTPOnly(NewHTTPTransport(opts)), req)
			// The hosts differ (two listeners); the rest must not.
			if !strings.HasPrefix(lean.Host, "127.0.0.1:") || !strings.HasPrefix(std.Host, "127.0.0.1:") {
				t.Errorf("Host %q / %q", lean.Host, std.Host)
			}
			lean.Host, std.Host = "", ""
			// Each Send makes its own call id; a cast has none.
			for _, r := range []captured{lean, std} {
				ids := r.Header[CallIDHeader]
				if req.Cast != (len(ids) == 0) || len(ids) > 1 || len(ids) == 1 && !callIDPattern.MatchString(ids[0]) {
					t.Errorf("%s %v for cast=%v, want one of 32 hex digits on a call only", CallIDHeader, ids, req.Cast)
				}
				delete(r.Header, CallIDHeader)
			}
			if !reflect.DeepEqual(lean, std) {
				t.Errorf("lean request\n%+v\nnet/http request\n%+v", lean, std)
			}
			if _, ok := std.Header["Idempotency-Key"]; ok != (req.RequestID != "") {
				t.Errorf("Idempotency-Key present = %v for request id %q", ok, req.RequestID)
			}
		}
	}
}

// TestLeanRepliesOverNetHTTPServer calls a conductor's real handler:
// small replies come with Content-Length, large ones chunked; 204 for a
// cast; errors as JSON-RPC errors; MaxResponseBytes holds.
func TestLeanRepliesOverNetHTTPServer(t *testing.T) {
	hs := httptest.NewServer(NewHTTPHandler(testServer(t, nil), HTTPHandlerOptions{}))
	defer hs.Close()
	host := hs.Listener.Addr().String()
	for _, size := range []int{10, 1500, 5000, 100000} {
		bothTransports(t, HTTPTransportOptions{}, func(t *testing.T, tr *HTTPTransport) {
			c := NewClient(newTable(t), func() version.Version { return v("1.1") }, PlainCodec{}, tr)
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
			var re *RemoteError
			if !errors.As(err, &re) || re.Class != "NodeLocked" {
				t.Fatalf("err = %v", err)
			}
		})
	}
	bothTransports(t, HTTPTransportOptions{MaxResponseBytes: 1000}, func(t *testing.T, tr *HTTPTransport) {
		c := NewClient(newTable(t), func() version.Version { return v("1.1") }, PlainCodec{}, tr)
		for _, size := range []int{1000, 5000} { // Content-Length, chunked
			_, err := c.Call(context.Background(), host, "power", map[string]any{"node_id": strings.Repeat("n", size)})
			if err == nil || !strings.Contains(err.Error(), "reply larger than 1000 bytes") {
				t.Fatalf("%d: err = %v", size, err)
			}
		}
		if _, err := c.Call(context.Background(), host, "power", map[string]any{"node_id": "n1"}); err != nil {
			t.Fatalf("after an oversize reply: %v", err)
		}
	})
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

// TestLeanErrorsMatchNetHTTP checks each failure is classified as the
// net/http path classifies it.
func TestLeanErrorsMatchNetHTTP(t *testing.T) {
	call := keepaliveCall("req-1")
	t.Run("refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		host := ln.Addr().String()
		ln.Close()
		bothTransports(t, HTTPTransportOptions{}, func(t *testing.T, tr *HTTPTransport) {
			_, err := tr.Send(context.Background(), host, call)
			var ue *UnreachableError
			if !errors.Is(err, ErrUnreachable) || !errors.As(err, &ue) || ue.Host != host {
				t.Fatalf("err = %v, want UnreachableError", err)
			}
		})
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
		bothTransports(t, HTTPTransportOptions{Timeout: 200 * time.Millisecond}, func(t *testing.T, tr *HTTPTransport) {
			start := time.Now()
			_, err := tr.Send(context.Background(), hang(t), call)
			var ne net.Error
			if errors.Is(err, ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("err = %v, want a timeout", err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("took %v", d)
			}
		})
	})
	t.Run("ctx cancelled", func(t *testing.T) {
		bothTransports(t, HTTPTransportOptions{Timeout: time.Minute}, func(t *testing.T, tr *HTTPTransport) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			_, err := tr.Send(ctx, hang(t), call)
			if errors.Is(err, ErrUnreachable) || !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("took %v", d)
			}
		})
	})
	t.Run("ctx deadline", func(t *testing.T) {
		bothTransports(t, HTTPTransportOptions{Timeout: time.Minute}, func(t *testing.T, tr *HTTPTransport) {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_, err := tr.Send(ctx, hang(t), call)
			if errors.Is(err, ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want context.DeadlineExceeded", err)
			}
		})
	})
	t.Run("ctx cancelled before", func(t *testing.T) {
		bothTransports(t, HTTPTransportOptions{}, func(t *testing.T, tr *HTTPTransport) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := tr.Send(ctx, hang(t), call)
			if errors.Is(err, ErrUnreachable) || !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
		})
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
			bothTransports(t, HTTPTransportOptions{}, func(t *testing.T, tr *HTTPTransport) {
				_, err := tr.Send(context.Background(), rc.ln.Addr().String(), call)
				if err == nil || errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want one with %q", err, tc.want)
				}
			})
		})
	}
}

// TestLeanConnectionReuse checks which connections go back to the pool.
func TestLeanConnectionReuse(t *testing.T) {
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

// TestLeanResendRules checks the lean path resends only where net/http
// would: see also TestHTTPTransportResendsWhenKeepAliveConnectionCloses
// and TestHTTPTransportResendLimits, which run on it.
func TestLeanResendRules(t *testing.T) {
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
		bothTransports(t, HTTPTransportOptions{}, func(t *testing.T, tr *HTTPTransport) {
			before := rc.accepted()
			host := rc.ln.Addr().String()
			if _, err := tr.Send(ctx, host, keepaliveCall("req-1")); err != nil {
				t.Fatal(err)
			}
			_, err := tr.Send(ctx, host, keepaliveCall("req-2"))
			if err == nil || errors.Is(err, ErrUnreachable) {
				t.Fatalf("err = %v, want a plain failure", err)
			}
			if got := rc.accepted() - before; got != 1 {
				t.Errorf("%d connections, want 1 (no resend)", got)
			}
		})
	})
	t.Run("idle connection closed, conductor gone", func(t *testing.T) {
		// The conductor answered, then stopped while the connection sat
		// idle: the closed connection is noticed before it is used, so the
		// next call meets a refused dial, unreachable, and the Router may
		// try another conductor.
		bothTransports(t, HTTPTransportOptions{}, func(t *testing.T, tr *HTTPTransport) {
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
			if !errors.Is(err, ErrUnreachable) {
				t.Fatalf("err = %v, want ErrUnreachable", err)
			}
		})
	})
	t.Run("idle connection closed, conductor up", func(t *testing.T) {
		bothTransports(t, HTTPTransportOptions{}, func(t *testing.T, tr *HTTPTransport) {
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
		})
	})
}

// TestLeanPool checks the idle limits and the idle timeout.
func TestLeanPool(t *testing.T) {
	release := make(chan struct{})
	rc := startRawConductorSelf(t, func(rc *rawConductor, t *testing.T, n int, c net.Conn, br *bufio.Reader) {
		<-release
		for rc.answer(t, c, br) {
		}
	})
	tr := NewHTTPTransport(HTTPTransportOptions{})
	host := rc.ln.Addr().String()
	const calls = 40
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for i := range calls {
		wg.Go(func() {
			_, err := tr.Send(context.Background(), host, keepaliveCall(fmt.Sprint("req-", i)))
			errs <- err
		})
	}
	for rc.accepted() < calls {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	l := tr.lean
	h := l.hosts[host]
	l.mu.Lock()
	idle, total := len(h.idle), l.idleTotal
	l.mu.Unlock()
	if idle != leanMaxIdlePerHost || total != idle {
		t.Fatalf("%d idle connections (%d in all) after %d concurrent calls, want %d", idle, total, calls, leanMaxIdlePerHost)
	}

	// Idle past the timeout: not reused, and closed by the sweep.
	l.mu.Lock()
	for _, c := range h.idle[:leanMaxIdlePerHost-1] {
		c.idleAt = c.idleAt.Add(-leanIdleTimeout)
	}
	newest := h.idle[leanMaxIdlePerHost-1]
	newest.idleAt = newest.idleAt.Add(-leanIdleTimeout)
	l.mu.Unlock()
	before := rc.accepted()
	if _, err := tr.Send(context.Background(), host, keepaliveCall("req-x")); err != nil {
		t.Fatal(err)
	}
	if rc.accepted() != before+1 {
		t.Errorf("a connection idle past %v was reused", leanIdleTimeout)
	}
	l.closeExpired()
	l.mu.Lock()
	idle, total = len(h.idle), l.idleTotal
	l.mu.Unlock()
	if idle != 1 || total != 1 {
		t.Errorf("%d idle connections (%d in all) after the sweep, want the fresh one", idle, total)
	}
	l.closeIdle()
}

// TestLeanHostEligibility checks which hosts the lean path takes.
func TestLeanHostEligibility(t *testing.T) {
	tr := NewHTTPTransport(HTTPTransportOptions{})
	for host, want := range map[string]bool{
		"cond1": true, "cond1:9000": true, "127.0.0.1": true, "[::1]:9000": true, "cond_1.example.com": true,
		"[fe80::1%eth0]:9000": false, "condé": false, "cond1:abc": false, "a b": false,
	} {
		if got := tr.lean.host(host, tr.URL).ok; got != want {
			t.Errorf("%q: lean = %v, want %v", host, got, want)
		}
	}
	t.Setenv("HTTP_PROXY", "http://proxy.invalid:3128")
	// ProxyFromEnvironment reads the environment once per process, so a
	// fresh check here may not see it; newLeanHost asks it, as net/http
	// does, and follows its answer.
	if p, _ := http.ProxyFromEnvironment(&http.Request{URL: &url.URL{Scheme: "http", Host: "cond9:8089", Path: "/"}}); p != nil {
		if tr.lean.host("cond9", tr.URL).ok {
			t.Error("the lean path took a host net/http would reach through a proxy")
		}
	}
	if NewHTTPTransport(HTTPTransportOptions{TLS: &tls.Config{MinVersion: tls.VersionTLS12}}).lean != nil {
		t.Error("TLS transport has a lean path")
	}
	for id, want := range map[string]bool{"req-1": true, "": true, "a b": true, " a": false, "a\r\nX: y": false, "é": false} {
		if got := leanHeaderValue(id); got != want {
			t.Errorf("leanHeaderValue(%q) = %v", id, got)
		}
	}
}

func httpAnswer(status, body string) string {
	return fmt.Sprintf("HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", status, len(body), body)
}

// TestLeanAgainstDrainingConductor runs calls from eight goroutines
// against a conductor's net/http server that turns keep-alives off and on
// again and again, then off, as a draining conductor does once (idle
// connections close, answers carry Connection: close): every call
// succeeds and runs once, on both paths.
//
// Without the call id a call may run twice: http.Server's closeIdleConns
// can close a connection whose next request it has just read but not yet
// marked active; the handler then runs, its answer is lost, and the
// client, having read no byte of a response on a reused connection,
// resends (net/http's rule for a request with an Idempotency-Key). The
// conductor's reply cache answers the resend with the first run's reply
// (CallIDHeader). Turning keep-alives off repeatedly makes the race common
// enough that a run without the cache fails.
func TestLeanAgainstDrainingConductor(t *testing.T) {
	bothTransports(t, HTTPTransportOptions{Timeout: 10 * time.Second}, func(t *testing.T, tr *HTTPTransport) {
		const workers, perWorker = 8, 150
		seen := make(chan string, 2*workers*perWorker)
		hs := httptest.NewServer(NewHTTPHandler(testServer(t, seen), HTTPHandlerOptions{}))
		defer hs.Close()
		host := hs.Listener.Addr().String()
		c := NewClient(newTable(t), func() version.Version { return v("1.1") }, PlainCodec{}, tr)
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
					ctx := WithRequestID(context.Background(), fmt.Sprintf("req-%d-%d", w, i))
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
	})
}
