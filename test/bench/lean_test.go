package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
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

// readRequest reads one request and returns its request line, or "" when
// the client closed.
func readRequest(br *bufio.Reader) string {
	line, _ := readRequestBody(br)
	return line
}

// readRequestBody reads one request's head and its Content-Length body
// (the lean client's GETs have none) and returns its request line and
// body; the line is "" when the client closed first.
func readRequestBody(br *bufio.Reader) (first, body string) {
	length := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", ""
		}
		line = strings.TrimRight(line, "\r\n")
		if first == "" {
			first = line
			continue
		}
		if name, value, ok := strings.Cut(line, ":"); ok && strings.EqualFold(name, "Content-Length") {
			length, _ = strconv.Atoi(strings.TrimSpace(value))
		}
		if line == "" {
			b := make([]byte, length)
			if _, err := io.ReadFull(br, b); err != nil {
				return "", ""
			}
			return first, string(b)
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
	conns := countConns(srv)
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
		if got := c.clientName(); got != tc.want {
			t.Errorf("%s with %s: enroll and the read workloads use %s, want %s", tc.url, tc.choice, got, tc.want)
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
	url := benchServer(b, []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)))
	for _, choice := range []string{httpClientLean, httpClientNetHTTP} {
		b.Run(strings.ReplaceAll(choice, "/", "-"), func(b *testing.B) {
			c := newClient(options{url: url, apiVersion: "1.26", httpClient: choice})
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

// createdNodeJSON is a reply to POST /v1/nodes as Rivet writes it at
// microversion 1.26 (keys sorted, as encoding/json writes a map), about
// 1.5 KB; extra is the node's extra.
func createdNodeJSON(uuid, name string, extra map[string]any) []byte {
	links := func(suffix string) []map[string]string {
		return []map[string]string{
			{"href": "http://127.0.0.1:6385/v1/nodes/" + uuid + suffix, "rel": "self"},
			{"href": "http://127.0.0.1:6385/nodes/" + uuid + suffix, "rel": "bookmark"},
		}
	}
	if extra == nil {
		extra = map[string]any{}
	}
	view := map[string]any{
		"uuid": uuid, "created_at": "2026-11-22T16:40:01.123456+00:00", "updated_at": nil,
		"chassis_uuid": nil, "console_enabled": false, "driver": "fake-hardware",
		"driver_info": map[string]any{}, "extra": extra, "instance_info": map[string]any{},
		"instance_uuid": nil, "last_error": nil, "maintenance": false, "maintenance_reason": nil,
		"power_state": nil, "properties": map[string]any{}, "provision_state": "enroll",
		"provision_updated_at": nil, "reservation": nil, "target_power_state": nil,
		"target_provision_state": nil, "links": links(""), "ports": links("/ports"),
		"driver_internal_info": map[string]any{}, "name": name, "inspection_started_at": nil,
		"inspection_finished_at": nil, "clean_step": map[string]any{}, "raid_config": map[string]any{},
		"target_raid_config": map[string]any{}, "states": links("/states"),
		"network_interface": "noop", "resource_class": nil, "portgroups": links("/portgroups"),
	}
	b, err := json.Marshal(view)
	if err != nil {
		panic(err)
	}
	return b
}

func leanPoster(t *testing.T, o options) *leanConn {
	t.Helper()
	o.httpClient = httpClientLean
	l := newClient(o).newLeanConn()
	if l == nil {
		t.Fatalf("no lean client for %s", o.url)
	}
	t.Cleanup(l.close)
	return l
}

// A POST of the lean client is what client.do sends for the same body:
// method, target, Host, every header (but Accept-Encoding, see
// TestLeanClientSendsWhatDoSends) and the body's bytes.
func TestLeanClientPostSendsWhatDoSends(t *testing.T) {
	type seen struct {
		Method, RequestURI, Host, Proto string
		ContentLength                   int64
		Header                          http.Header
		Body                            string
	}
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		h := r.Header.Clone()
		h.Del("Accept-Encoding")
		mu.Lock()
		got = append(got, seen{r.Method, r.RequestURI, r.Host, r.Proto, r.ContentLength, h, string(body)})
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"uuid": "u-1"}`)
	}))
	defer srv.Close()
	nb, err := newNodeBody(map[string]any{"driver": "fake-hardware", "extra": map[string]any{"rack": "<r1> & 2"}})
	if err != nil {
		t.Fatal(err)
	}
	body := nb.appendTo(nil, 1763829601123456789, 42)
	for name, o := range map[string]options{
		"noauth":             {url: srv.URL + "/v1/", apiVersion: "1.26"},
		"http_basic, prefix": {url: srv.URL + "/baremetal/v1", apiVersion: "1.80", username: "admin", password: "s3cret:x"},
	} {
		t.Run(name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			c := newClient(o)
			// json.RawMessage: json.Marshal copies the (compact) body as is.
			if err := c.do(t.Context(), http.MethodPost, "/v1/nodes", json.RawMessage(body), http.StatusCreated, nil); err != nil {
				t.Fatal(err)
			}
			l := leanPoster(t, o)
			resp, err := l.post(t.Context(), "/v1/nodes", body, http.StatusCreated)
			if err != nil || string(resp) != `{"uuid": "u-1"}` {
				t.Fatalf("post: %q, %v", resp, err)
			}
			if len(got) != 2 {
				t.Fatalf("%d requests seen, want 2", len(got))
			}
			if d := cmp.Diff(got[0], got[1]); d != "" {
				t.Errorf("client.do (-) and the lean client (+) differ:\n%s", d)
			}
			if got[1].Method != http.MethodPost || got[1].Header.Get("Content-Type") != "application/json" ||
				got[1].ContentLength != int64(len(body)) || got[1].Body != string(body) {
				t.Errorf("the lean client sent %+v", got[1])
			}
		})
	}
}

// A POST gets the status it wants (201) with its body; another status is
// an error naming the request, both statuses and the body, and the
// connection, whose response was complete, serves the next POST.
func TestLeanClientPostStatus(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "taken") {
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"error_message": "A node with name taken already exists."}`)
			return
		}
		w.WriteHeader(http.StatusCreated)
		w.Write(createdNodeJSON("1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "n", nil))
	}))
	conns := countConns(srv)
	srv.Start()
	defer srv.Close()
	l := leanPoster(t, options{url: srv.URL, apiVersion: "1.26"})
	resp, err := l.post(t.Context(), "/v1/nodes", []byte(`{"name":"n"}`), http.StatusCreated)
	if err != nil {
		t.Fatal(err)
	}
	if uuid, err := createdUUID(resp); uuid != "1be26c0b-03f2-4d2e-ae87-c02d7f33c123" || err != nil {
		t.Errorf("createdUUID = %q, %v", uuid, err)
	}
	_, err = l.post(t.Context(), "/v1/nodes", []byte(`{"name":"taken"}`), http.StatusCreated)
	if err == nil || !strings.Contains(err.Error(), "POST /v1/nodes: HTTP 409 (want 201)") || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("err = %v, want the request, the statuses and the body", err)
	}
	if _, err := l.post(t.Context(), "/v1/nodes", []byte(`{"name":"m"}`), http.StatusCreated); err != nil {
		t.Fatal(err)
	}
	// And a GET after POSTs on the same connection is a GET again.
	if _, err := l.get(t.Context(), "/v1/nodes/x", http.StatusCreated); err != nil {
		t.Fatal(err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// Connection: close after a POST's response: the next POST dials a new
// connection, and every body arrives whole.
func TestLeanClientPostConnectionClose(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := newRawServer(t, func(_ int, c net.Conn, br *bufio.Reader) {
		line, body := readRequestBody(br)
		if line != "POST /v1/nodes HTTP/1.1" {
			t.Errorf("request line %q", line)
			return
		}
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		io.WriteString(c, "HTTP/1.1 201 Created\r\nContent-Length: 13\r\nConnection: close\r\n\r\n{\"uuid\":\"u1\"}")
		for readRequest(br) != "" { // reusing it would wait for the timeout
		}
	})
	l := leanPoster(t, options{url: srv.url(), apiVersion: "1.26"})
	l.timeout = 2 * time.Second
	var want []string
	for i := range 3 {
		body := fmt.Sprintf(`{"name":"n%d","driver":"fake-hardware"}`, i)
		want = append(want, body)
		if resp, err := l.post(t.Context(), "/v1/nodes", []byte(body), http.StatusCreated); err != nil || string(resp) != `{"uuid":"u1"}` {
			t.Fatalf("request %d: %q, %v", i+1, resp, err)
		}
	}
	if n := srv.accepted.Load(); n != 3 {
		t.Errorf("%d connections for three Connection: close responses, want 3", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff(want, bodies); d != "" {
		t.Errorf("bodies received (-want +got):\n%s", d)
	}
}

// A POST is never sent twice: on a keep-alive connection the server closed
// while idle, or one it closed after reading the request without
// answering, the POST is an error; the server sees it at most once, no
// connection is dialled to resend it, and the next POST dials.
func TestLeanClientPostNotResent(t *testing.T) {
	for name, readSecond := range map[string]bool{"closed while idle": false, "read, then closed unanswered": true} {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string]int{}
			srv := newRawServer(t, func(n int, c net.Conn, br *bufio.Reader) {
				for range 2 {
					line, body := readRequestBody(br)
					if line == "" {
						return
					}
					mu.Lock()
					seen[body]++
					mu.Unlock()
					if n == 1 && body == "second" {
						return // read, not answered
					}
					io.WriteString(c, "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}")
					if n == 1 && !readSecond {
						return // closed idle, though the response promised keep-alive
					}
				}
			})
			l := leanPoster(t, options{url: srv.url(), apiVersion: "1.26"})
			if _, err := l.post(t.Context(), "/v1/nodes", []byte("first"), http.StatusCreated); err != nil {
				t.Fatal(err)
			}
			// Let an idle close reach this side first, as after a
			// server's idle timeout.
			time.Sleep(20 * time.Millisecond)
			_, err := l.post(t.Context(), "/v1/nodes", []byte("second"), http.StatusCreated)
			if err == nil || !strings.Contains(err.Error(), "POST /v1/nodes") {
				t.Fatalf("err = %v, want an error naming the POST", err)
			}
			if n := srv.accepted.Load(); n != 1 {
				t.Errorf("%d connections after the failed POST, want 1: it was resent", n)
			}
			if _, err := l.post(t.Context(), "/v1/nodes", []byte("third"), http.StatusCreated); err != nil {
				t.Fatal(err)
			}
			if n := srv.accepted.Load(); n != 2 {
				t.Errorf("%d connections, want 2", n)
			}
			mu.Lock()
			defer mu.Unlock()
			want := map[string]int{"first": 1, "third": 1}
			if readSecond {
				want["second"] = 1
			}
			if d := cmp.Diff(want, seen); d != "" {
				t.Errorf("requests the server saw (-want +got):\n%s", d)
			}
		})
	}
}

// enroll's bodies mean what the template map with the name set meant:
// the per-node name replaces a template's own, and everything else is
// the template's.
func TestNodeBody(t *testing.T) {
	for name, tmpl := range map[string]string{
		"default":            `{"driver": "fake-hardware"}`,
		"with its own name":  `{"name": "fixed", "driver": "fake-hardware"}`,
		"only a name":        `{"name": "fixed"}`,
		"empty":              `{}`,
		"null":               `null`,
		"nested, to escape":  `{"driver": "fake-hardware", "driver_info": {"fake_power_delay": 0.1, "x": [1, "<&>", null, {"name": "inner"}]}, "extra": {"q": "a\"b\\c\u00e9\n"}}`,
		"name not a string":  `{"name": 7, "driver": "d"}`,
		"duplicate name key": `{"name": "a", "name": "b"}`,
	} {
		t.Run(name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal([]byte(tmpl), &m); err != nil {
				t.Fatal(err)
			}
			nb, err := newNodeBody(m)
			if err != nil {
				t.Fatal(err)
			}
			for _, i := range []int{0, 7, 123456} {
				body := nb.appendTo([]byte("garbage"), 1763829601123456789, i)[len("garbage"):]
				// What enroll sent before, through client.do.
				old := map[string]any{}
				for k, v := range m {
					old[k] = v
				}
				old["name"] = fmt.Sprintf("bench-%d-%d", int64(1763829601123456789), i)
				var got map[string]any
				if err := json.Unmarshal(body, &got); err != nil {
					t.Fatalf("node %d: %s is not JSON: %v", i, body, err)
				}
				if d := cmp.Diff(old, got); d != "" {
					t.Errorf("node %d: %s means (+), not what the map did (-):\n%s", i, body, d)
				}
				if n := strings.Count(string(body), `"name":`); n != 1+strings.Count(tmpl, `{"name": "inner"}`) {
					t.Errorf("node %d: %s has %d name keys", i, body, n)
				}
			}
		})
	}
}

// createdUUID takes the top-level uuid, not one nested before it, steps
// over strings holding quotes, brackets and escapes, and leaves what the
// scan does not recognise to json.Unmarshal, agreeing with it. The scan
// itself must find the uuid in all but the escaped cases: the fallback
// would hide its mistakes.
func TestCreatedUUID(t *testing.T) {
	const u = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	real := createdNodeJSON(u, "bench-1-2", map[string]any{"uuid": "not-this-one", "a": []any{map[string]any{"uuid": "nor-this"}}})
	var indented bytes.Buffer
	indented.WriteString("\n")
	if err := json.Indent(&indented, real, "", "\t "); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		body, want, wantErr string
		fallback            bool // the scan leaves it to json.Unmarshal
	}{
		"rivet's reply":       {string(real), u, "", false},
		"indented":            {indented.String(), u, "", false},
		"nested uuid first":   {`{"extra": {"uuid": "x"}, "links": [{"uuid": "y"}, ["uuid", "z"]], "uuid": "u"}`, "u", "", false},
		"uuid as a value":     {`{"name": "uuid", "k": "\"uuid\": \"x\"", "uuid": "u"}`, "u", "", false},
		"strings to step":     {`{"a": "}]\\\"{[", "b": ["]", "\\\\"], "c": {"d": "\"}"}, "uuid": "u"}`, "u", "", false},
		"scalars":             {`{"n": -1.5e3, "t": true, "f": false, "z": null,"uuid":"u" }`, "u", "", false},
		"escaped key":         {`{"\u0075uid": "u"}`, "u", "", true},
		"escaped value":       {`{"uuid": "a\u002db"}`, "a-b", "", true},
		"no uuid":             {`{"name": "n"}`, "", "no uuid", false},
		"uuid null":           {`{"uuid": null}`, "", "no uuid", false},
		"uuid a number":       {`{"uuid": 7}`, "", "cannot unmarshal", false},
		"not an object":       {`["uuid", "u"]`, "", "cannot unmarshal", false},
		"not JSON":            {`<html>Created</html>`, "", "invalid character", false},
		"truncated":           {string(real[:len(real)/3]), "", "unexpected end", false},
		"empty":               {``, "", "unexpected end", false},
		"unterminated string": {`{"a": "b, "uuid": "u"}`, "", "invalid character", false},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := createdUUID([]byte(tc.body))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("createdUUID = %q, %v; want an error saying %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("createdUUID = %q, %v; want %q", got, err, tc.want)
			}
			if scanned, ok := scanTopLevelString([]byte(tc.body), "uuid"); ok == tc.fallback || (ok && scanned != tc.want) {
				t.Errorf("the scan found %q, %v; want %q, %v", scanned, ok, tc.want, !tc.fallback)
			}
			var n struct {
				UUID string `json:"uuid"`
			}
			if err := json.Unmarshal([]byte(tc.body), &n); err != nil || n.UUID != got {
				t.Errorf("json.Unmarshal says %q, %v", n.UUID, err)
			}
		})
	}
}

// The enroll workload, on both clients, against a fake API answering 201
// with a node: every node enrolled once under its own name (the
// template's name replaced), its uuid recorded; a 409 is an error, its
// node not recorded; the lean client keeps one connection per worker.
func TestEnrollWorkloadBothClients(t *testing.T) {
	for _, choice := range []string{httpClientLean, httpClientNetHTTP} {
		t.Run(strings.ReplaceAll(choice, "/", "-"), func(t *testing.T) {
			var mu sync.Mutex
			names := map[string]int{}
			var issued []string
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || r.URL.Path != "/v1/nodes" || r.Header.Get("Content-Type") != "application/json" {
					t.Errorf("%s %s (%s)", r.Method, r.URL, r.Header.Get("Content-Type"))
				}
				var body map[string]any
				if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
					t.Error(err)
				}
				if body["driver"] != "fake-hardware" || body["extra"] == nil {
					t.Errorf("body %v lacks the template", body)
				}
				name, _ := body["name"].(string)
				mu.Lock()
				names[name]++
				k := len(names)
				uuid := fmt.Sprintf("00000000-0000-0000-0000-%012d", k)
				if k%10 != 3 {
					issued = append(issued, uuid)
				}
				mu.Unlock()
				if k%10 == 3 {
					w.WriteHeader(http.StatusConflict)
					io.WriteString(w, `{"error_message": "conflict"}`)
					return
				}
				w.WriteHeader(http.StatusCreated)
				w.Write(createdNodeJSON(uuid, name, map[string]any{"uuid": "nested"}))
			}))
			conns := countConns(srv)
			srv.Start()
			defer srv.Close()
			o := options{url: srv.URL, apiVersion: "1.26", httpClient: choice, nodes: 100, concurrency: 4,
				template: `{"driver": "fake-hardware", "name": "fixed", "extra": {"uuid": "nested"}}`}
			b := &bench{c: newClient(o), o: o}
			r, err := runWorkload(t.Context(), "enroll", b)
			if err != nil {
				t.Fatal(err)
			}
			if r.Requests != 90 || r.Errors != 10 || r.HTTPClient != choice || r.ClientCPUus <= 0 {
				t.Errorf("result %s; want 90 requests, 10 errors", r)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(names) != 100 {
				t.Errorf("%d names for 100 nodes", len(names))
			}
			for name, n := range names {
				if n != 1 || !strings.HasPrefix(name, "bench-") {
					t.Errorf("name %q sent %d times", name, n)
				}
			}
			slices.Sort(issued)
			got := slices.Sorted(slices.Values(b.nodes))
			if d := cmp.Diff(issued, got); d != "" {
				t.Errorf("uuids recorded (-issued +got):\n%s", d)
			}
			if n := conns.Load(); choice == httpClientLean && n != 4 {
				t.Errorf("%d connections for 4 workers", n)
			}
		})
	}
}

// BenchmarkEnrollRequest compares one enroll request of the two clients
// (body built, POST sent, the 1.5 KB reply read for its uuid) against an
// in-process server that allocates nothing per request: allocs/op is the
// client's (ns/op holds the server's work too: compare it only between
// the two).
func BenchmarkEnrollRequest(b *testing.B) {
	reply := createdNodeJSON("1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "bench-1-1", nil)
	url := benchServer(b, append([]byte(fmt.Sprintf("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(reply))), reply...))
	tmpl := map[string]any{"driver": "fake-hardware"}
	const stamp = 1763829601123456789
	b.Run("lean", func(b *testing.B) {
		l := newClient(options{url: url, apiVersion: "1.26", httpClient: httpClientLean}).newLeanConn()
		defer l.close()
		nb, err := newNodeBody(tmpl)
		if err != nil {
			b.Fatal(err)
		}
		var body []byte
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			body = nb.appendTo(body[:0], stamp, i)
			r, err := l.post(b.Context(), "/v1/nodes", body, http.StatusCreated)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := createdUUID(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("net-http", func(b *testing.B) {
		c := newClient(options{url: url, apiVersion: "1.26", httpClient: httpClientNetHTTP})
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			body := map[string]any{}
			for k, v := range tmpl {
				body[k] = v
			}
			body["name"] = fmt.Sprintf("bench-%d-%d", stamp, i)
			var n node
			if err := c.do(b.Context(), http.MethodPost, "/v1/nodes", body, http.StatusCreated, &n); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCreatedUUID is the reading of the created node's uuid from
// Rivet's reply, by the scan and by json.Unmarshal into one field.
func BenchmarkCreatedUUID(b *testing.B) {
	reply := createdNodeJSON("1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "bench-1-1", nil)
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := createdUUID(reply); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var n struct {
				UUID string `json:"uuid"`
			}
			if err := json.Unmarshal(reply, &n); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchServer serves resp to every request, skipping a Content-Length
// body, without allocating per request; it returns its URL.
func benchServer(b *testing.B, resp []byte) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				length := 0
				for {
					line, err := br.ReadSlice('\n')
					if err != nil {
						return
					}
					if name, value, ok := bytes.Cut(bytes.TrimSpace(line), []byte(":")); ok && asciiEqualFold(name, "Content-Length") {
						for _, d := range bytes.TrimSpace(value) {
							length = length*10 + int(d-'0')
						}
					}
					if len(line) <= 2 { // the blank line ending a request's head
						if _, err := br.Discard(length); err != nil {
							return
						}
						length = 0
						if _, err := c.Write(resp); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// countConns counts the connections an unstarted test server accepts.
func countConns(srv *httptest.Server) *atomic.Int32 {
	var n atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	return &n
}
