package jsonrpc

import (
	"encoding/json"
	"testing"

	"github.com/rivetmetal/rivet/core/rpc"
)

// The API user travels in the context parameter beside the request id
// and reaches the server's request; without one the envelope is what it
// was, so a release 0.2 conductor reads it as before (and one with a user
// too: it reads only request_id).
func TestUserTravelsInTheContext(t *testing.T) {
	for _, user := range []string{"alice", "", `a"b`} {
		req := &rpc.Request{Method: "power", Version: "1.0", RequestID: "req-1", User: user,
			Params: map[string]json.RawMessage{"node_id": json.RawMessage(`"n1"`)}}
		body, err := requestBody(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _, werr := parseEnvelope(body)
		if werr != nil {
			t.Fatal(werr)
		}
		if got.User != user || got.RequestID != "req-1" {
			t.Errorf("user %q: parsed user %q, request id %q from %s", user, got.User, got.RequestID, body)
		}
		var old struct {
			Params struct {
				Context map[string]any `json:"context"`
			} `json:"params"`
		}
		if err := json.Unmarshal(body, &old); err != nil {
			t.Fatal(err)
		}
		if _, has := old.Params.Context["user"]; has != (user != "") {
			t.Errorf("user %q: context %v", user, old.Params.Context)
		}
	}
}
