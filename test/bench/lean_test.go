package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// rawServer is a scripted HTTP/1.1 server on a raw listener: serve is
// called for each accepted connection, with the connection's number
// (from 1) and a reader of what the client sent.
type rawServer struct {
	ln       net.Listener
	accepted atomic.Int32
	wg       sync.WaitGroup
}

func newRawServer(t *testing.T, serve func(n int, c net.Conn, br *bufio.Reader)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := int(s.accepted.Add(1))
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				serve(n, c, bufio.NewReader(c))
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *rawServer) url() string { return "http://" + s.ln.Addr().String() }

// readRequest reads one request's head (the lean client sends no body)
// and returns its request line, or "" when the client closed.
func readRequest(br *bufio.Reader) string {
	first := ""
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return ""
		}
		line = strings.TrimRight(line, "\r\n")
		if first == "" {
			first = line
			continue
		}
		if line == "" {
			return first
		}
	}
}

// serveScript answers each request on a connection with the next of
// responses, then closes the connection.
func serveScript(responses ...string) func(int, net.Conn, *bufio.Reader) {
	return func(_ int, c net.Conn, br *bufio.Reader) {
		for _, r := range responses {
			if readRequest(br) == "" {
				return
			}
			io.WriteString(c, r)
		}
	}
}

func leanGetter(t *testing.T, url string) *leanConn {
	t.Helper()
	c := newClient(options{url: url, apiVersion: "1.26", httpClient: httpClientLean})
	if c.lean == nil {
		t.Fatalf("no lean client for %s", url)
	}
	g := c.newGetter().(*leanConn)
	t.Cleanup(g.close)
	return g
}

func TestLeanClientFraming(t *testing.T) {
	for name, tc := range map[string]struct {
		response string
		want     string
	}{
		"content-length":                {"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"a\": \"bc\"}", `{"a": "bc"}`},
		"lower-case headers, no reason": {"HTTP/1.1 200\r\ncontent-length: 2\r\n\r\n{}", `{}`},
		"empty":                         {"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", ``},
		"chunked": {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"4\r\n{\"a\"\r\n7\r\n: \"bc\"}\r\n0\r\n\r\n", `{"a": "bc"}`},
		"chunked, extensions and trailers": {"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n" +
			"4;name=value\r\n{\"a\"\r\nA ; x=\"y\"\r\n: \"bcdef\"}\r\n0;last\r\nX-Checksum: 1\r\nX-Other: 2\r\n\r\n", `{"a": "bcdef"}`},
		"interim 100 then 200": {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", `ok`},
		"LF line ends":         {"HTTP/1.1 200 OK\nContent-Length: 2\n\nok", `ok`},
	} {
		t.Run(name, func(t *testing.T) {
			// Each response twice on one connection: the second read
			// shows the first was consumed exactly.
			srv := newRawServer(t, serveScript(tc.response, tc.response))
			g := leanGetter(t, srv.url())
			for i := range 2 {
				body, err := g.get(t.Context(), "/v1/nodes", http.StatusOK)
				if err != nil {
					t.Fatalf("request %d: %v", i+1, err)
				}
				if string(body) != tc.want {
					t.Errorf("request %d: body %q, want %q", i+1, body, tc.want)
				}
			}
			if n := srv.accepted.Load(); n != 1 {
				t.Errorf("%d connections for two keep-alive requests, want 1", n)
			}
		})
	}
}

// A large body, longer than the read buffer, in many chunks, arrives
// whole; the list workload counts its items.
func TestLeanClientLargeChunkedList(t *testing.T) {
	var items []string
	for i := range 1000 {
		items = append(items, fmt.Sprintf(`{"uuid": "%08d-0000-0000-0000-000000000000", "name": "n%d"}`, i, i))
	}
	page := `{"nodes": [` + strings.Join(items, ", ") + `]}`
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < len(page); i += 1000 { // no Content-Length: net/http chunks it
			io.WriteString(w, page[i:min(i+1000, len(page))])
			w.(http.Flusher).Flush()
		}
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	g := leanGetter(t, srv.URL)
	body, err := g.get(t.Context(), "/v1/nodes?limit=1000", http.StatusOK)
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != page {
		t.Fatalf("body of %d bytes differs from the %d-byte page", len(body), len(page))
	}
	if n, err := countListed(body); n != 1000 || err != nil {
		t.Errorf("countListed = %d, %v", n, err)
	}
}

// Connection: close ends the connection after its response; the next
// request dials a new one and succeeds.
func TestLeanClientConnectionClose(t *testing.T) {
	srv := newRawServer(t, func(_ int, c net.Conn, br *bufio.Reader) {
		if readRequest(br) == "" {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive, close\r\n\r\nok")
		// Keep the connection open, answering nothing more: a client
		// that reused it would wait for its timeout.
		for readRequest(br) != "" {
		}
	})
	g := leanGetter(t, srv.url())
	g.timeout = 2 * time.Second
	for i := range 3 {
		if body, err := g.get(t.Context(), "/v1/", http.StatusOK); err != nil || string(body) != "ok" {
			t.Fatalf("request %d: %q, %v", i+1, body, err)
		}
	}
	if n := srv.accepted.Load(); n != 3 {
		t.Errorf("%d connections for three Connection: close responses, want 3", n)
	}
}

// A keep-alive connection the server closes while idle (after one
// response, without saying so) is retried once on a new connection: the
// request succeeds, and the workload counts one request, no error.
func TestLeanClientIdleCloseRetried(t *testing.T) {
	var requests atomic.Int32
	srv := newRawServer(t, func(_ int, c net.Conn, br *bufio.Reader) {
		if readRequest(br) == "" {
			return
		}
		requests.Add(1)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		// then close, idle, though the response promised keep-alive
	})
	o := options{url: srv.url(), apiVersion: "1.26", httpClient: httpClientLean}
	b := &bench{c: newClient(o), o: o}
	lat, errs, _ := parallelEach(t.Context(), 3, 1, func() (func(context.Context, int) error, func()) {
		g := b.c.newGetter()
		return func(ctx context.Context, _ int) error {
			if _, err := g.get(ctx, "/v1/", http.StatusOK); err != nil {
				t.Error(err)
				return err
			}
			// Let the server's close reach this side before the next
			// request, as it would after an idle timeout.
			time.Sleep(20 * time.Millisecond)
			return nil
		}, g.close
	})
	if len(lat.d) != 3 || errs != 0 {
		t.Errorf("%d requests, %d errors; want 3 and 0", len(lat.d), errs)
	}
	if n, r := srv.accepted.Load(), requests.Load(); n != 3 || r != 3 {
		t.Errorf("%d connections, %d requests served; want 3 and 3", n, r)
	}
}

// A new connection closed before the response is an error, not retried:
// only a reused connection may have been closed idle.
func TestLeanClientFreshCloseNotRetried(t *testing.T) {
	srv := newRawServer(t, func(_ int, c net.Conn, br *bufio.Reader) { readRequest(br) })
	g := leanGetter(t, srv.url())
	_, err := g.get(t.Context(), "/v1/", http.StatusOK)
	if err == nil || !errors.Is(err, io.EOF) {
		t.Errorf("err = %v, want an EOF", err)
	}
	if n := srv.accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1 (no retry)", n)
	}
}

// A status other than the one wanted is an error naming it with the
// start of the body; the connection stays usable.
func TestLeanClientStatusError(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/nodes/missing" {
			http.Error(w, `{"error_message": "Node missing could not be found."}`, http.StatusNotFound)
			return
		}
		io.WriteString(w, "{}")
	}))
	var conns atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	g := leanGetter(t, srv.URL)
	_, err := g.get(t.Context(), "/v1/nodes/missing", http.StatusOK)
	if err == nil || !strings.Contains(err.Error(), "HTTP 404 (want 200)") || !strings.Contains(err.Error(), "could not be found") {
		t.Fatalf("err = %v, want the status and the body", err)
	}
	if _, err := g.get(t.Context(), "/v1/nodes/there", http.StatusOK); err != nil {
		t.Fatal(err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1: a complete non-200 response keeps the connection", n)
	}
}

// Every protocol surprise is an error, and the next request re-dials.
func TestLeanClientMalformed(t *testing.T) {
	for name, tc := range map[string]struct{ response, wantErr string }{
		"not HTTP":               {"HTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "malformed status line"},
		"HTTP/2 status":          {"HTTP/2 200 OK\r\nContent-Length: 2\r\n\r\nok", "malformed status line"},
		"bad status code":        {"HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\nok", "malformed status code"},
		"no length":              {"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nok", "neither Content-Length nor chunked"},
		"bad length":             {"HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nok", "Content-Length"},
		"conflicting lengths":    {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", "conflicting Content-Length"},
		"header without colon":   {"HTTP/1.1 200 OK\r\nContent-Length 2\r\n\r\nok", "malformed header line"},
		"EOF mid-body":           {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok", "unexpected EOF"},
		"EOF in headers":         {"HTTP/1.1 200 OK\r\nContent-Len", "unexpected EOF"},
		"bad chunk size":         {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n", "bad chunk size"},
		"chunk longer than said": {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokay\r\n0\r\n\r\n", "not CRLF"},
		"EOF mid-chunk":          {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nok", "unexpected EOF"},
		"gzip coding":            {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", "unsupported Transfer-Encoding"},
	} {
		t.Run(name, func(t *testing.T) {
			// Connection 1 gets the bad response (and is closed after
			// it), later ones a good one.
			srv := newRawServer(t, func(n int, c net.Conn, br *bufio.Reader) {
				if n == 1 {
					serveScript(tc.response)(n, c, br)
					return
				}
				serveScript("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")(n, c, br)
			})
			g := leanGetter(t, srv.url())
			_, err := g.get(t.Context(), "/v1/", http.StatusOK)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
			}
			if body, err := g.get(t.Context(), "/v1/", http.StatusOK); err != nil || string(body) != "ok" {
				t.Fatalf("after the error: %q, %v", body, err)
			}
			if n := srv.accepted.Load(); n != 2 {
				t.Errorf("%d connections, want 2: the failed one is re-dialled", n)
			}
		})
	}
}

// The lean client sends what client.do sends: same method, target, Host
// and headers (but Accept-Encoding, which net/http's transport adds for
// its own transparent decompression).
func TestLeanClientSendsWhatDoSends(t *testing.T) {
	type seen struct {
		Method, RequestURI, Host, Proto string
		Header                          http.Header
	}
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Clone()
		h.Del("Accept-Encoding")
		mu.Lock()
		got = append(got, seen{r.Method, r.RequestURI, r.Host, r.Proto, h})
		mu.Unlock()
		io.WriteString(w, "{}")
	}))
	defer srv.Close()
	for name, o := range map[string]options{
		"noauth":              {url: srv.URL + "/v1/", apiVersion: "1.26"},
		"http_basic, prefix":  {url: srv.URL + "/baremetal/v1", apiVersion: "1.80", username: "admin", password: "s3cret:x"},
		"no /v1 in given URL": {url: srv.URL, apiVersion: "1.1", username: "u"},
	} {
		t.Run(name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			o.httpClient = httpClientLean
			c := newClient(o)
			if c.lean == nil {
				t.Fatal("no lean client")
			}
			path := "/v1/nodes/detail?limit=100"
			if err := c.do(t.Context(), http.MethodGet, path, nil, http.StatusOK, nil); err != nil {
				t.Fatal(err)
			}
			g := c.newGetter()
			defer g.close()
			if _, err := g.get(t.Context(), path, http.StatusOK); err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 {
				t.Fatalf("%d requests seen, want 2", len(got))
			}
			if d := cmp.Diff(got[0], got[1]); d != "" {
				t.Errorf("client.do (-) and the lean client (+) differ:\n%s", d)
			}
			if got[1].Header.Get("X-OpenStack-Ironic-API-Version") != o.apiVersion {
				t.Errorf("microversion header %q", got[1].Header.Get("X-OpenStack-Ironic-API-Version"))
			}
			if u, p, ok := (&http.Request{Header: got[1].Header}).BasicAuth(); ok != (o.username != "") || u != o.username || p != o.password {
				t.Errorf("basic auth %q %q %v", u, p, ok)
			}
		})
	}
}

// https (and net/http when asked) keep the net/http path.
func TestHTTPClientChoice(t *testing.T) {
	for _, tc := range []struct{ url, choice, want string }{
		{"http://127.0.0.1:6385", httpClientLean, httpClientLean},
		{"http://127.0.0.1:6385/v1", httpClientNetHTTP, httpClientNetHTTP},
		{"https://127.0.0.1:6385", httpClientLean, httpClientNetHTTP},
		{"http://user:pw@127.0.0.1:6385", httpClientLean, httpClientNetHTTP},
	} {
		c := newClient(options{url: tc.url, apiVersion: "1.26", httpClient: tc.choice})
		if got := c.readClient(); got != tc.want {
			t.Errorf("%s with %s: read workloads use %s, want %s", tc.url, tc.choice, got, tc.want)
		}
		if _, isNet := c.newGetter().(*netGetter); isNet != (tc.want == httpClientNetHTTP) {
			t.Errorf("%s with %s: getter %T", tc.url, tc.choice, c.newGetter())
		}
	}
	if err := checkHTTPClient("fasthttp"); err == nil {
		t.Error("checkHTTPClient accepted fasthttp")
	}
	o, err := parseSuiteFlags([]string{"--http-client", "net/http"}, io.Discard)
	if err != nil || o.httpClient != httpClientNetHTTP {
		t.Errorf("suite --http-client net/http: %q, %v", o.httpClient, err)
	}
	s := &suite{o: o}
	if got := s.benchOptions("http://x", 1).httpClient; got != httpClientNetHTTP {
		t.Errorf("the suite's bench options use %q", got)
	}
	if _, err := parseSuiteFlags([]string{"--http-client", "curl"}, io.Discard); err == nil {
		t.Error("suite accepted --http-client curl")
	}
}

// A server that never answers: the context's end, and the request
// timeout, both stop the request promptly.
func TestLeanClientTimeouts(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := newRawServer(t, func(_ int, c net.Conn, br *bufio.Reader) {
		readRequest(br)
		<-release
	})
	t.Run("context", func(t *testing.T) {
		g := leanGetter(t, srv.url())
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		_, err := g.get(ctx, "/v1/", http.StatusOK)
		if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
			t.Errorf("err = %v after %v, want context.Canceled soon", err, time.Since(start))
		}
	})
	t.Run("request timeout", func(t *testing.T) {
		g := leanGetter(t, srv.url())
		g.timeout = 50 * time.Millisecond
		start := time.Now()
		_, err := g.get(t.Context(), "/v1/", http.StatusOK)
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() || time.Since(start) > 5*time.Second {
			t.Errorf("err = %v after %v, want a timeout soon", err, time.Since(start))
		}
	})
}

// The read workloads, on both clients, against a server that answers
// like the API: requests counted, no errors, the list's items counted.
func TestReadWorkloadsBothClients(t *testing.T) {
	var items []string
	for i := range 100 {
		items = append(items, fmt.Sprintf(`{"uuid": "u-%d"}`, i))
	}
	page := `{"nodes": [` + strings.Join(items, ",") + `]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/nodes" {
			io.WriteString(w, page)
			return
		}
		io.WriteString(w, `{"uuid": "u-0"}`)
	}))
	defer srv.Close()
	for _, choice := range []string{httpClientLean, httpClientNetHTTP} {
		t.Run(strings.ReplaceAll(choice, "/", "-"), func(t *testing.T) {
			o := options{url: srv.URL, apiVersion: "1.26", httpClient: choice, getConcurrency: 4, duration: 200 * time.Millisecond}
			b := &bench{c: newClient(o), o: o}
			for i := range 100 {
				b.nodes = append(b.nodes, fmt.Sprintf("u-%d", i))
			}
			for _, w := range []string{"get", "list", "detail"} {
				r, err := runWorkload(t.Context(), w, b)
				if err != nil {
					t.Fatalf("%s: %v", w, err)
				}
				if r.Requests == 0 || r.Errors != 0 || r.HTTPClient != choice || r.ClientCPUus <= 0 {
					t.Errorf("%s: %s", w, r)
				}
				if !strings.Contains(r.String(), "client cpu") {
					t.Errorf("%s: %q lacks the client's CPU", w, r)
				}
			}
		})
	}
}

// BenchmarkGetter compares the two clients of the read workloads on one
// small response from an in-process server that allocates nothing per
// request, so allocs/op is the client's (ns/op holds the server's work
// too: compare it only between the two).
func BenchmarkGetter(b *testing.B) {
	body := `{"uuid": "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "power_state": "power off"}`
	resp := []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadSlice('\n')
					if err != nil {
						return
					}
					if len(line) <= 2 { // the blank line ending a request
						if _, err := c.Write(resp); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	for _, choice := range []string{httpClientLean, httpClientNetHTTP} {
		b.Run(strings.ReplaceAll(choice, "/", "-"), func(b *testing.B) {
			c := newClient(options{url: "http://" + ln.Addr().String(), apiVersion: "1.26", httpClient: choice})
			g := c.newGetter()
			defer g.close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.get(b.Context(), "/v1/nodes/1be26c0b-03f2-4d2e-ae87-c02d7f33c123", http.StatusOK); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
