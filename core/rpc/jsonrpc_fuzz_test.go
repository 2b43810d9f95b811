package rpc

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzJSONRPCHandler feeds arbitrary bodies to the JSON-RPC HTTP handler:
// it never panics, never answers 5xx for protocol garbage, and every
// answer is a JSON-RPC 2.0 response (or an empty 204 for a cast).
func FuzzJSONRPCHandler(f *testing.F) {
	h := NewHTTPHandler(testServer(f, nil), HTTPHandlerOptions{MaxBodyBytes: 64 << 10})
	for _, seed := range []string{
		`{"jsonrpc":"2.0","method":"power","params":{"node_id":"n1","rpc.version":"1.0"},"id":1}`,
		`{"jsonrpc":"2.0","method":"power","params":{"node_id":"n1","rpc.version":"1.0","context":{"request_id":"r"}}}`,
		`{"jsonrpc":"2.0","method":"nope","params":{},"id":"x"}`,
		`[{"jsonrpc":"2.0"}]`, `{"jsonrpc":`, `null`, `{}`, `"x"`, `{"jsonrpc":"2.0","method":"power","params":[1],"id":null}`,
		`{"jsonrpc":"2.0","method":"power","params":{"node_id":"n","rpc.version":5},"id":1}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
		if rec.Code >= 500 {
			t.Fatalf("body %q → %d %s", body, rec.Code, rec.Body)
		}
		if rec.Code == http.StatusNoContent {
			return
		}
		var out struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.JSONRPC != "2.0" {
			t.Fatalf("body %q → %d, not a JSON-RPC response: %s", body, rec.Code, rec.Body)
		}
	})
}
