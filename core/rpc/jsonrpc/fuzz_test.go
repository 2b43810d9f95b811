package jsonrpc

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rivetmetal/rivet/core/internal/leakcheck"
)

// FuzzJSONRPCHandler feeds arbitrary bodies to the JSON-RPC HTTP handler:
// it never panics, never answers 5xx for protocol garbage, and every
// answer is a JSON-RPC 2.0 response (or an empty 204 for a cast) whose
// error message, if any, shows no Go or decoder internals.
func FuzzJSONRPCHandler(f *testing.F) {
	h := NewHTTPHandler(testServer(f, nil), HTTPHandlerOptions{MaxBodyBytes: 64 << 10})
	for _, seed := range []string{
		`{"jsonrpc":"2.0","method":"power","params":{"node_id":"n1","rpc.version":"1.0"},"id":1}`,
		`{"jsonrpc":"2.0","method":"power","params":{"node_id":"n1","rpc.version":"1.0","context":{"request_id":"r"}}}`,
		`{"jsonrpc":"2.0","method":"nope","params":{},"id":"x"}`,
		`[{"jsonrpc":"2.0"}]`, `{"jsonrpc":`, `null`, `{}`, `"x"`, `{"jsonrpc":"2.0","method":"power","params":[1],"id":null}`,
		`{"jsonrpc":"2.0","method":"power","params":{"node_id":"n","rpc.version":5},"id":1}`,
		`{"jsonrpc":"2.0","method":5,"params":{},"id":1}`, `{"jsonrpc":"2.0","method":"power","params":{"node_id":[1],"rpc.version":"1.0"},"id":1}`,
		`{"jsonrpc":"2.0","method":"power","params":{},"id":1,"x":1}`, `{"jsonrpc":"2.0","method":"power","params":{"context":{"request_id":5}},"id":1}`,
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
			Error   *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.JSONRPC != "2.0" {
			t.Fatalf("body %q → %d, not a JSON-RPC response: %s", body, rec.Code, rec.Body)
		}
		if out.Error != nil {
			if x := leakcheck.GoInternalsBeyond(out.Error.Message, string(body)); x != "" {
				t.Fatalf("body %q → error message shows %q: %s", body, x, out.Error.Message)
			}
		}
	})
}

// FuzzJSONRPCHandlerCallID feeds arbitrary call ids (CallIDHeader) with
// arbitrary bodies, each request twice: never a panic or a 5xx, always a
// JSON-RPC answer, and with an id the handler keys on, the second answer
// is the first's.
func FuzzJSONRPCHandlerCallID(f *testing.F) {
	h := NewHTTPHandler(testServer(f, nil), HTTPHandlerOptions{MaxBodyBytes: 64 << 10})
	call := `{"jsonrpc":"2.0","method":"power","params":{"node_id":"n1","rpc.version":"1.0"},"id":1}`
	for _, seed := range []struct{ id, body string }{
		{"0123456789abcdef0123456789abcdef", call},
		{"7d0c3f4e-0b5c-4a43-9a59-2d8a1e9b6c11", `{"jsonrpc":"2.0","method":"power","params":{"node_id":"locked","rpc.version":"1.0"},"id":"x"}`},
		{"short", call}, {"", call}, {"0123456789abcdef\r\n", call},
		{"0123456789abcdef0123456789abcdef", `{"jsonrpc":"2.0","method":"clean","params":{"rpc.version":"1.0"}}`},
		{"0123456789abcdef0123456789abcdef", `{"jsonrpc":`},
	} {
		f.Add(seed.id, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, id string, body []byte) {
		var answers []*httptest.ResponseRecorder
		for range 2 {
			rec := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
			r.Header[CallIDHeader] = []string{id}
			h.ServeHTTP(rec, r)
			if rec.Code >= 500 {
				t.Fatalf("call id %q, body %q → %d %s", id, body, rec.Code, rec.Body)
			}
			if rec.Code != http.StatusNoContent {
				var out struct {
					JSONRPC string `json:"jsonrpc"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.JSONRPC != "2.0" {
					t.Fatalf("call id %q, body %q → %d, not a JSON-RPC response: %s", id, body, rec.Code, rec.Body)
				}
			}
			answers = append(answers, rec)
		}
		if validCallID(id) && answers[0].Code == http.StatusOK && answers[0].Body.String() != answers[1].Body.String() {
			t.Fatalf("call id %q, body %q: answers differ:\n%s\n%s", id, body, answers[0].Body, answers[1].Body)
		}
	})
}
