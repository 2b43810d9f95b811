package jsonrpc

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/htpasswd"
)

// The JSON-RPC server hardens http_basic as the REST API does: failed
// logins lock a client out (429, Retry-After, no password check), and each
// failure is logged with the client and the user tried, not the password.
func TestJSONRPCLoginBackoff(t *testing.T) {
	users := writeHtpasswd(t, "rpc", "s3cret")
	now := time.Unix(1_800_000_000, 0)
	var logs bytes.Buffer
	h := NewHTTPHandler(testServer(t, nil), HTTPHandlerOptions{Users: users, Now: func() time.Time { return now },
		Log: slog.New(slog.NewTextHandler(&logs, nil))})
	post := func(user, pw string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"power","params":{"node_id":"n","rpc.version":"1.0"}}`))
		req.RemoteAddr = "198.51.100.9:4000"
		req.SetBasicAuth(user, pw)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for i := range htpasswd.FreeFailures + 1 {
		if rec := post("rpc", "wrong-secret"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i+1, rec.Code)
		}
	}
	rec := post("rpc", "s3cret")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("locked out: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	now = now.Add(htpasswd.LockBase)
	if rec := post("rpc", "s3cret"); rec.Code != http.StatusOK {
		t.Fatalf("after the lock-out: %d %s", rec.Code, rec.Body)
	}
	out := logs.String()
	if !strings.Contains(out, "json-rpc login failed") || !strings.Contains(out, "client=198.51.100.9") || !strings.Contains(out, "user=rpc") {
		t.Errorf("log lacks the failed login's client or user:\n%s", out)
	}
	if strings.Contains(out, "wrong-secret") {
		t.Error("a password reached the log")
	}
}
