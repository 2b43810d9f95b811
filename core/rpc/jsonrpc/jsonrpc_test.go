package jsonrpc

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/htpasswd"
	"github.com/rivetmetal/rivet/core/internal/leakcheck"
	"github.com/rivetmetal/rivet/core/version"
	"golang.org/x/crypto/bcrypt"

	"github.com/rivetmetal/rivet/core/rpc"
)

// nodeLocked is a typed error like the conductor's.
type nodeLocked struct{ msg string }

func (e *nodeLocked) Error() string      { return e.msg }
func (e *nodeLocked) ErrorClass() string { return "NodeLocked" }
func (e *nodeLocked) HTTPCode() int      { return http.StatusConflict }

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testServer serves newTable with handlers that exercise errors and ids.
func testServer(t testing.TB, seen chan<- string) *rpc.Server {
	s := rpc.NewServer(newTable(t), rpc.PlainCodec{}, quietLog(), context.Background())
	s.Handle("power", func(ctx context.Context, p rpc.Params) (any, error) {
		id, err := p.String("node_id")
		if err != nil {
			return nil, err
		}
		switch id {
		case "locked":
			return nil, &nodeLocked{msg: "Node locked is locked by host c1, please retry after the current operation is completed."}
		case "boom":
			return nil, errors.New("database password=hunter2 leaked in an internal error")
		}
		if seen != nil {
			seen <- rpc.RequestID(ctx)
		}
		return map[string]string{"node": id}, nil
	})
	s.Handle("clean", func(context.Context, rpc.Params) (any, error) { return nil, nil })
	return s
}

func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestJSONRPCProtocolErrors(t *testing.T) {
	hs := httptest.NewServer(NewHTTPHandler(testServer(t, nil), HTTPHandlerOptions{MaxBodyBytes: 1024}))
	defer hs.Close()
	params := `{"node_id":"n1","rpc.version":"1.0"}`
	tests := map[string]struct {
		body       string
		wantStatus int
		wantCode   float64
		wantMsg    string
	}{
		"not json":         {`{"jsonrpc":`, 200, codeParseError, "Parse error"},
		"batch":            {`[{"jsonrpc":"2.0"}]`, 200, codeInvalidRequest, "Batch"},
		"wrong version":    {`{"jsonrpc":"1.0","method":"power","params":` + params + `,"id":1}`, 200, codeInvalidRequest, "jsonrpc"},
		"no method":        {`{"jsonrpc":"2.0","params":` + params + `,"id":1}`, 200, codeInvalidRequest, "Missing method"},
		"list params":      {`{"jsonrpc":"2.0","method":"power","params":[1],"id":1}`, 200, codeInvalidRequest, "Params must be an object"},
		"unknown method":   {`{"jsonrpc":"2.0","method":"nope","params":` + params + `,"id":1}`, 200, codeMethodNotFound, "Method nope was not found"},
		"unknown argument": {`{"jsonrpc":"2.0","method":"power","params":{"node_id":"n","bogus":1,"rpc.version":"1.0"},"id":1}`, 200, codeInvalidParams, `unexpected argument "bogus"`},
		"missing argument": {`{"jsonrpc":"2.0","method":"power","params":{"rpc.version":"1.0"},"id":1}`, 200, codeInvalidParams, "missing required argument node_id"},
		"arg above request version": {`{"jsonrpc":"2.0","method":"power","params":{"node_id":"n","timeout":3,"rpc.version":"1.0"},"id":1}`,
			200, codeInvalidParams, `"timeout" needs RPC 1.1`},
		"bad arg type":  {`{"jsonrpc":"2.0","method":"power","params":{"node_id":5,"rpc.version":"1.0"},"id":1}`, 200, codeInvalidParams, "argument node_id"},
		"newer minor":   {`{"jsonrpc":"2.0","method":"power","params":{"node_id":"n","rpc.version":"1.2"},"id":1}`, 200, 500, "not supported"},
		"other major":   {`{"jsonrpc":"2.0","method":"power","params":{"node_id":"n","rpc.version":"2.0"},"id":1}`, 200, 500, "not supported"},
		"no version":    {`{"jsonrpc":"2.0","method":"power","params":{"node_id":"n"},"id":1}`, 200, 500, "not supported"},
		"duplicate key": {`{"jsonrpc":"2.0","method":"power","method":"nope","params":` + params + `,"id":1}`, 200, codeInvalidRequest, `duplicate key "method"`},
		"too deep": {`{"jsonrpc":"2.0","method":"power","params":{"node_id":"n","rpc.version":"1.0","context":` +
			strings.Repeat("[", 80) + strings.Repeat("]", 80) + `},"id":1}`, 200, codeInvalidRequest, "nesting deeper than 72"},
		"unknown member": {`{"jsonrpc":"2.0","method":"power","params":` + params + `,"id":1,"extra":true}`, 200, codeInvalidRequest, `unknown member "extra"`},
		"not UTF-8":      {"{\"jsonrpc\":\"2.0\",\"method\":\"power\",\"params\":{\"node_id\":\"\xff\",\"rpc.version\":\"1.0\"},\"id\":1}", 200, codeInvalidRequest, "UTF-8"},
		"oversize body":  {`{"jsonrpc":"2.0","method":"power","params":{"node_id":"` + strings.Repeat("x", 2000) + `"},"id":1}`, 413, 413, "larger than 1024"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			status, out := post(t, hs.URL, tc.body)
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d (%v)", status, tc.wantStatus, out)
			}
			e, _ := out["error"].(map[string]any)
			if e == nil || e["code"] != tc.wantCode || !strings.Contains(fmt.Sprint(e["message"]), tc.wantMsg) {
				t.Fatalf("error = %v, want code %v with %q", out["error"], tc.wantCode, tc.wantMsg)
			}
		})
	}
	resp, err := http.Get(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET gave %d, want 405", resp.StatusCode)
	}
}

// TestJSONRPCRequestBodyLength serves a call whose body announces its
// length (read into one buffer of that length) and one that does not
// (chunked: read as it comes), each within and beyond the bound.
func TestJSONRPCRequestBodyLength(t *testing.T) {
	hs := httptest.NewServer(NewHTTPHandler(testServer(t, nil), HTTPHandlerOptions{MaxBodyBytes: 1024}))
	defer hs.Close()
	call := func(id string) string {
		return `{"jsonrpc":"2.0","method":"power","params":{"node_id":"` + id + `","rpc.version":"1.0"},"id":1}`
	}
	tests := map[string]struct {
		body       string
		chunked    bool
		wantStatus int
		want       string
	}{
		"announced":          {call("n1"), false, 200, `"result":{"node":"n1"}`},
		"chunked":            {call("n1"), true, 200, `"result":{"node":"n1"}`},
		"announced oversize": {call(strings.Repeat("x", 2000)), false, 413, "larger than 1024"},
		"chunked oversize":   {call(strings.Repeat("x", 2000)), true, 413, "larger than 1024"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(tc.body)
			if tc.chunked {
				body = io.MultiReader(body) // no length known: sent chunked
			}
			req, err := http.NewRequest(http.MethodPost, hs.URL, body)
			if err != nil {
				t.Fatal(err)
			}
			if announced := req.ContentLength == int64(len(tc.body)); announced == tc.chunked {
				t.Fatalf("request announces %d bytes of %d", req.ContentLength, len(tc.body))
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			out, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantStatus || !strings.Contains(string(out), tc.want) {
				t.Fatalf("HTTP %d %s, want %d with %s", resp.StatusCode, out, tc.wantStatus, tc.want)
			}
		})
	}
}

func TestTypedErrorRoundTrip(t *testing.T) {
	hs := httptest.NewServer(NewHTTPHandler(testServer(t, nil), HTTPHandlerOptions{}))
	defer hs.Close()
	c := rpc.NewClient(newTable(t), func() version.Version { return v("1.1") }, rpc.PlainCodec{}, NewHTTPTransport(HTTPTransportOptions{}))
	host := hs.Listener.Addr().String()

	// Unregistered class: a RemoteError that still knows its class and code.
	_, err := c.Call(context.Background(), host, "power", map[string]any{"node_id": "locked"})
	var re *rpc.RemoteError
	if !errors.As(err, &re) || re.Class != "NodeLocked" || re.Code != 409 || !strings.Contains(re.Message, "is locked by host c1") {
		t.Fatalf("err = %#v", err)
	}
	if !errors.Is(err, &nodeLocked{}) {
		t.Fatal("errors.Is does not match by class")
	}

	// Registered class: rebuilt as the local type.
	rpc.RegisterErrorClass("NodeLocked", func(msg string, _ int) error { return &nodeLocked{msg: msg} })
	defer rpc.RegisterErrorClass("NodeLocked", nil)
	_, err = c.Call(context.Background(), host, "power", map[string]any{"node_id": "locked"})
	var nl *nodeLocked
	if !errors.As(err, &nl) {
		t.Fatalf("err = %#v, want *nodeLocked", err)
	}

	// Internal errors stay in the conductor: the caller learns nothing private.
	_, err = c.Call(context.Background(), host, "power", map[string]any{"node_id": "boom"})
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "Unexpected error") {
		t.Fatalf("internal error crossed the wire as %v", err)
	}
}

func TestCastAndRequestID(t *testing.T) {
	seen := make(chan string, 2)
	srv := testServer(t, seen)
	hs := httptest.NewServer(NewHTTPHandler(srv, HTTPHandlerOptions{}))
	defer hs.Close()
	c := rpc.NewClient(newTable(t), func() version.Version { return v("1.1") }, rpc.PlainCodec{}, NewHTTPTransport(HTTPTransportOptions{}))
	ctx := rpc.WithRequestID(context.Background(), "req-abc")
	if err := c.Cast(ctx, hs.Listener.Addr().String(), "power", map[string]any{"node_id": "n1"}); err != nil {
		t.Fatal(err)
	}
	if err := srv.WaitCasts(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != "req-abc" {
		t.Fatalf("request id in handler = %q", got)
	}
	status, _ := post(t, hs.URL, `{"jsonrpc":"2.0","method":"power","params":{"node_id":"n","rpc.version":"1.0"}}`)
	if status != http.StatusNoContent {
		t.Fatalf("cast without id answered %d, want 204", status)
	}
	<-seen
}

func writeHtpasswd(t *testing.T, user, pw string) *htpasswd.File {
	h, _ := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	p := filepath.Join(t.TempDir(), "htpasswd")
	if err := os.WriteFile(p, []byte(user+":"+string(h)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := htpasswd.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestTLSAndBasicAuth(t *testing.T) {
	users := writeHtpasswd(t, "rpc", "s3cret")
	hs := httptest.NewUnstartedServer(NewHTTPHandler(testServer(t, nil), HTTPHandlerOptions{Users: users}))
	hs.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	hs.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusted-client case logs a handshake error
	hs.StartTLS()
	defer hs.Close()
	pool := x509.NewCertPool()
	pool.AddCert(hs.Certificate())
	host := hs.Listener.Addr().String()
	call := func(user, pw string) error {
		tr := NewHTTPTransport(HTTPTransportOptions{TLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, Username: user, Password: pw})
		c := rpc.NewClient(newTable(t), func() version.Version { return v("1.1") }, rpc.PlainCodec{}, tr)
		_, err := c.Call(context.Background(), host, "power", map[string]any{"node_id": "n1"})
		return err
	}
	if err := call("rpc", "s3cret"); err != nil {
		t.Fatalf("authorised call over TLS: %v", err)
	}
	var pe *rpc.ProtocolError
	if err := call("rpc", "wrong"); !errors.As(err, &pe) || pe.Code != 401 {
		t.Fatalf("wrong password: %v", err)
	}
	if err := call("", ""); !errors.As(err, &pe) || pe.Code != 401 {
		t.Fatalf("no credentials: %v", err)
	}
	// A client that does not trust the server's certificate refuses it.
	tr := NewHTTPTransport(HTTPTransportOptions{TLS: &tls.Config{MinVersion: tls.VersionTLS12}})
	if _, err := tr.Send(context.Background(), host, &rpc.Request{Method: "power", Version: "1.0"}); err == nil {
		t.Fatal("untrusted certificate accepted")
	}
}

func TestHTTPTransportURL(t *testing.T) {
	tr := NewHTTPTransport(HTTPTransportOptions{})
	for in, want := range map[string]string{
		"cond1":      "http://cond1:8089/",
		"cond1:9000": "http://cond1:9000/",
		"127.0.0.1":  "http://127.0.0.1:8089/",
		"[::1]:9000": "http://[::1]:9000/",
		"[::1]":      "http://[::1]:8089/",
	} {
		if got := tr.URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFuzzyBodiesNeverPanic(t *testing.T) {
	hs := httptest.NewServer(NewHTTPHandler(testServer(t, nil), HTTPHandlerOptions{}))
	defer hs.Close()
	for _, body := range []string{"", "null", "{}", `{"jsonrpc":"2.0","method":"power","params":null}`, `{"jsonrpc":"2.0","method":"power","params":{"context":5,"rpc.version":5}}`, "\x00\xff"} {
		resp, err := http.Post(hs.URL, "application/json", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Errorf("body %q gave %d", body, resp.StatusCode)
		}
	}
}

// TestJSONRPCErrorsInPlainWords: no error message of a bad envelope or
// argument shows a Go type, a Go struct field or the decoder's wording.
func TestJSONRPCErrorsInPlainWords(t *testing.T) {
	hs := httptest.NewServer(NewHTTPHandler(testServer(t, nil), HTTPHandlerOptions{MaxBodyBytes: 1 << 20}))
	defer hs.Close()
	tests := map[string]struct{ body, want string }{
		"method a number":    {`{"jsonrpc":"2.0","method":5,"params":{},"id":1}`, `"method" must be a string, not a number`},
		"jsonrpc a list":     {`{"jsonrpc":["2.0"],"method":"power","params":{},"id":1}`, `"jsonrpc" must be a string, not a list`},
		"params a string":    {`{"jsonrpc":"2.0","method":"power","params":"x","id":1}`, "Params must be an object"},
		"unknown member":     {`{"jsonrpc":"2.0","method":"power","params":{},"id":1,"extra":1}`, `unknown member "extra"`},
		"malformed":          {`{"jsonrpc":"2.0",}`, "malformed JSON at byte 18"},
		"incomplete":         {`{"jsonrpc":"2.0"`, "incomplete"},
		"argument a list":    {`{"jsonrpc":"2.0","method":"power","params":{"node_id":["n"],"rpc.version":"1.0"},"id":1}`, "argument node_id: the document must be a string, not a list"},
		"argument an object": {`{"jsonrpc":"2.0","method":"power","params":{"node_id":{"a":1},"rpc.version":"1.0"},"id":1}`, "argument node_id: the document must be a string, not an object"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, out := post(t, hs.URL, tc.body)
			e, _ := out["error"].(map[string]any)
			msg := fmt.Sprint(e["message"])
			if x := leakcheck.GoInternals(msg); x != "" {
				t.Errorf("message shows %q: %s", x, msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("message %q lacks %q", msg, tc.want)
			}
		})
	}
}
