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
// (GETs have none) and returns its request line and body; the line is ""
// when the client closed first.
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

// A getter sends what client.do sends: the same method, target, Host,
// headers (but Accept-Encoding: the bench's transport does not ask for
// gzip, Rivet does not compress) and, for a POST, body.
func TestGetterSendsWhatDoSends(t *testing.T) {
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
		io.WriteString(w, `{"uuid": "u-1"}`)
	}))
	defer srv.Close()
	nb, err := newNodeBody(map[string]any{"driver": "fake-hardware", "extra": map[string]any{"rack": "<r1> & 2"}})
	if err != nil {
		t.Fatal(err)
	}
	body := nb.appendTo(nil, 1763829601123456789, 42)
	for name, o := range map[string]options{
		"noauth":              {url: srv.URL + "/v1/", apiVersion: "1.26"},
		"http_basic, prefix":  {url: srv.URL + "/baremetal/v1", apiVersion: "1.80", username: "admin", password: "s3cret:x"},
		"no /v1 in given URL": {url: srv.URL, apiVersion: "1.1", username: "u"},
	} {
		t.Run(name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			c := newClient(o)
			g := c.newGetter()
			defer g.close()
			path := "/v1/nodes/detail?limit=100"
			if err := c.do(t.Context(), http.MethodGet, path, nil, http.StatusOK, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := g.get(t.Context(), path, http.StatusOK); err != nil {
				t.Fatal(err)
			}
			// json.RawMessage: json.Marshal copies the (compact) body as is.
			if err := c.do(t.Context(), http.MethodPost, "/v1/nodes", json.RawMessage(body), http.StatusOK, nil); err != nil {
				t.Fatal(err)
			}
			if resp, err := g.post(t.Context(), "/v1/nodes", body, http.StatusOK); err != nil || string(resp) != `{"uuid": "u-1"}` {
				t.Fatalf("post: %q, %v", resp, err)
			}
			if len(got) != 4 {
				t.Fatalf("%d requests seen, want 4", len(got))
			}
			for i := 0; i < 4; i += 2 {
				if d := cmp.Diff(got[i], got[i+1]); d != "" {
					t.Errorf("client.do (-) and the getter (+) differ:\n%s", d)
				}
			}
			if got[1].Header.Get("X-OpenStack-Ironic-API-Version") != o.apiVersion {
				t.Errorf("microversion header %q", got[1].Header.Get("X-OpenStack-Ironic-API-Version"))
			}
			if u, p, ok := (&http.Request{Header: got[1].Header}).BasicAuth(); ok != (o.username != "") || u != o.username || p != o.password {
				t.Errorf("basic auth %q %q %v", u, p, ok)
			}
			if p := got[3]; p.Method != http.MethodPost || p.Header.Get("Content-Type") != "application/json" ||
				p.ContentLength != int64(len(body)) || p.Body != string(body) {
				t.Errorf("the getter posted %+v", p)
			}
		})
	}
}

// A status other than the one wanted is an error naming the request, both
// statuses and the start of the body; the connection stays usable.
func TestGetterStatusError(t *testing.T) {
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
	g := newClient(options{url: srv.URL, apiVersion: "1.26"}).newGetter()
	_, err := g.get(t.Context(), "/v1/nodes/missing", http.StatusOK)
	if err == nil || !strings.Contains(err.Error(), "GET /v1/nodes/missing: HTTP 404 (want 200)") || !strings.Contains(err.Error(), "could not be found") {
		t.Fatalf("err = %v, want the request, the statuses and the body", err)
	}
	if body, err := g.get(t.Context(), "/v1/nodes/there", http.StatusOK); err != nil || string(body) != "{}" {
		t.Fatalf("%q, %v", body, err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1: a complete non-200 response keeps the connection", n)
	}
}

// A POST reaches the server at most once: when the server closes a
// keep-alive connection while it is idle, or after reading a POST without
// answering it, no POST is sent twice. (net/http may send a POST it never
// wrote on a fresh connection: that is the first time the server sees it.)
func TestGetterPostNeverSentTwice(t *testing.T) {
	for name, readSecond := range map[string]bool{"closed while idle": false, "read, then closed unanswered": true} {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string]int{}
			srv := newRawServer(t, func(n int, c net.Conn, br *bufio.Reader) {
				for range 3 {
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
			c := newClient(options{url: srv.url(), apiVersion: "1.26"})
			t.Cleanup(c.http.CloseIdleConnections) // before the server's cleanup waits for its connections
			g := c.newGetter()
			if _, err := g.post(t.Context(), "/v1/nodes", []byte("first"), http.StatusCreated); err != nil {
				t.Fatal(err)
			}
			// Let an idle close reach this side first, as after a
			// server's idle timeout.
			time.Sleep(20 * time.Millisecond)
			_, err := g.post(t.Context(), "/v1/nodes", []byte("second"), http.StatusCreated)
			if readSecond && (err == nil || !strings.Contains(err.Error(), "/v1/nodes")) {
				t.Fatalf("err = %v, want an error naming the POST", err)
			}
			if _, err := g.post(t.Context(), "/v1/nodes", []byte("third"), http.StatusCreated); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			for body, n := range seen {
				if n != 1 {
					t.Errorf("the server saw %q %d times", body, n)
				}
			}
			if seen["first"] != 1 || seen["third"] != 1 || readSecond && seen["second"] != 1 {
				t.Errorf("the server saw %v", seen)
			}
		})
	}
}

// A server that never answers: the context's end stops the request
// promptly.
func TestGetterContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := newRawServer(t, func(_ int, c net.Conn, br *bufio.Reader) {
		readRequest(br)
		<-release
	})
	g := newClient(options{url: srv.url(), apiVersion: "1.26"}).newGetter()
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := g.get(ctx, "/v1/", http.StatusOK)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// The read workloads against a server that answers
// like the API: requests counted, no errors, the list's items counted.
func TestReadWorkloads(t *testing.T) {
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
	{
		{
			o := options{url: srv.URL, apiVersion: "1.26", getConcurrency: 4, duration: 200 * time.Millisecond}
			b := &bench{c: newClient(o), o: o}
			for i := range 100 {
				b.nodes = append(b.nodes, fmt.Sprintf("u-%d", i))
			}
			for _, w := range []string{"get", "list", "detail"} {
				r, err := runWorkload(t.Context(), w, b)
				if err != nil {
					t.Fatalf("%s: %v", w, err)
				}
				if r.Requests == 0 || r.Errors != 0 || r.ClientCPUus <= 0 {
					t.Errorf("%s: %s", w, r)
				}
				if !strings.Contains(r.String(), "client cpu") {
					t.Errorf("%s: %q lacks the client's CPU", w, r)
				}
			}
		}
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

// The enroll workload against a fake API answering 201 with a node: every
// node enrolled once under its own name (the template's name replaced),
// its uuid recorded; a 409 is an error, its node not recorded; the
// workers keep their connections alive.
func TestEnrollWorkload(t *testing.T) {
	{
		{
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
			o := options{url: srv.URL, apiVersion: "1.26", nodes: 100, concurrency: 4,
				template: `{"driver": "fake-hardware", "name": "fixed", "extra": {"uuid": "nested"}}`}
			b := &bench{c: newClient(o), o: o}
			r, err := runWorkload(t.Context(), "enroll", b)
			if err != nil {
				t.Fatal(err)
			}
			if r.Requests != 90 || r.Errors != 10 || r.ClientCPUus <= 0 {
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
			// net/http may dial for a worker while another connection
			// turns idle, and keep both: a few more than 4, never one per
			// request.
			if n := conns.Load(); n > 20 {
				t.Errorf("%d connections for 4 workers and 100 requests: not kept alive", n)
			}
		}
	}
}

// BenchmarkGetter is one read workload request on a small response from an
// in-process server that allocates nothing per request, so allocs/op is
// the client's.
func BenchmarkGetter(b *testing.B) {
	body := `{"uuid": "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "power_state": "power off"}`
	url := benchServer(b, []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)))
	g := newClient(options{url: url, apiVersion: "1.26"}).newGetter()
	defer g.close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.get(b.Context(), "/v1/nodes/1be26c0b-03f2-4d2e-ae87-c02d7f33c123", http.StatusOK); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnrollRequest is one enroll request (body built, POST sent, the
// 1.5 KB reply read for its uuid) against an in-process server that
// allocates nothing per request: allocs/op is the client's.
func BenchmarkEnrollRequest(b *testing.B) {
	reply := createdNodeJSON("1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "bench-1-1", nil)
	url := benchServer(b, append([]byte(fmt.Sprintf("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(reply))), reply...))
	const stamp = 1763829601123456789
	g := newClient(options{url: url, apiVersion: "1.26"}).newGetter()
	defer g.close()
	nb, err := newNodeBody(map[string]any{"driver": "fake-hardware"})
	if err != nil {
		b.Fatal(err)
	}
	var body []byte
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		body = nb.appendTo(body[:0], stamp, i)
		r, err := g.post(b.Context(), "/v1/nodes", body, http.StatusCreated)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := createdUUID(r); err != nil {
			b.Fatal(err)
		}
	}
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
					if name, value, ok := bytes.Cut(bytes.TrimSpace(line), []byte(":")); ok && bytes.EqualFold(name, []byte("Content-Length")) {
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
