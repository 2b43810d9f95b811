package api

import (
	"bytes"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/agenttoken"
)

// agentEnv is an env with one node in state st and a port, and a log.
func agentEnv(t *testing.T, st string, opts ...envOption) (*env, string, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	opts = append(opts, func(d *Deps) { d.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	e := newEnv(t, opts...)
	id := e.node(nil)
	e.must(http.StatusCreated, "POST", "/v1/ports", "latest", map[string]any{"node_uuid": id, "address": "52:54:00:00:00:42"})
	n, err := e.store.GetNode(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	n.ProvisionState = st
	if err := e.store.Save(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	return e, id, &logs
}

// Lookup issues the token once, at every version that serves it; it is
// masked everywhere else: the node in lookup, later lookups, the node API.
func TestLookupIssuesAgentTokenOnce(t *testing.T) {
	for _, ver := range []string{"1.22", "1.31"} {
		t.Run(ver, func(t *testing.T) {
			e, id, logs := agentEnv(t, "wait call-back")
			got := e.must(http.StatusOK, "GET", "/v1/lookup?addresses=52:54:00:00:00:42", ver, nil).JSON(t)
			cfg := got["config"].(map[string]any)
			token, _ := cfg["agent_token"].(string)
			if len(token) != 43 || strings.ContainsAny(token, "+/=") || cfg["agent_token_required"] != true {
				t.Fatalf("config: agent_token %q, agent_token_required %v", token, cfg["agent_token_required"])
			}
			if dii := got["node"].(map[string]any)["driver_internal_info"].(map[string]any); dii[agenttoken.Key] != Masked {
				t.Errorf("lookup shows the token in driver_internal_info: %v", dii)
			}
			stored, _ := e.store.GetNode(t.Context(), id)
			if agenttoken.Stored(stored.DriverInternalInfo) != token {
				t.Fatal("the token answered is not the one stored")
			}
			before := len(e.cond.calls)
			again := e.must(http.StatusOK, "GET", "/v1/lookup?node_uuid="+id, ver, nil).JSON(t)
			if slices.Contains(e.cond.calls[before:], "get_node_with_token") {
				t.Error("a lookup of a node with a token went to the conductor (and its lease)")
			}
			if tok := again["config"].(map[string]any)["agent_token"]; tok != agenttoken.Masked {
				t.Errorf("second lookup answered agent_token %v, want it masked", tok)
			}
			for _, path := range []string{"/v1/nodes/" + id, "/v1/nodes/detail", "/v1/nodes/" + id + "?fields=driver_internal_info"} {
				body := e.must(http.StatusOK, "GET", path, "latest", nil).Body
				if bytes.Contains(body, []byte(token)) {
					t.Errorf("%s shows the token", path)
				}
			}
			if strings.Contains(logs.String(), token) {
				t.Error("the token reached the log")
			}
		})
	}
}

// Lookup finds only nodes in states that expect an agent, and issues no
// token for the others.
func TestLookupOutsideAgentStates(t *testing.T) {
	for _, st := range []string{"enroll", "manageable", "available", "active", "deploy failed"} {
		t.Run(st, func(t *testing.T) {
			e, id, _ := agentEnv(t, st)
			e.must(http.StatusNotFound, "GET", "/v1/lookup?addresses=52:54:00:00:00:42", "1.22", nil)
			e.must(http.StatusNotFound, "GET", "/v1/lookup?node_uuid="+id, "1.22", nil)
			if n, _ := e.store.GetNode(t.Context(), id); agenttoken.Present(n.DriverInternalInfo) || slices.Contains(e.cond.calls, "get_node_with_token") {
				t.Fatal("a token was issued")
			}
		})
	}
}

// A heartbeat needs the token lookup issued, at every microversion: without
// it or with another, 400 with Ironic's message and nothing reaches the
// conductor.
func TestHeartbeatRequiresAgentToken(t *testing.T) {
	e, id, logs := agentEnv(t, "wait call-back")
	token := e.must(http.StatusOK, "GET", "/v1/lookup?node_uuid="+id, "1.22", nil).JSON(t)["config"].(map[string]any)["agent_token"].(string)
	const missing, invalid = "Agent token is required for heartbeat processing.", "Invalid or missing agent token received."
	tests := []struct {
		name string
		body map[string]any
		code int
		msg  string
	}{
		{"no token", map[string]any{"callback_url": "http://a:9999"}, 400, missing},
		{"empty token", map[string]any{"callback_url": "http://a:9999", "agent_token": ""}, 400, invalid},
		{"wrong token", map[string]any{"callback_url": "http://a:9999", "agent_token": "x" + token[1:]}, 400, invalid},
		{"masked token", map[string]any{"callback_url": "http://a:9999", "agent_token": agenttoken.Masked}, 400, invalid},
		{"token of another type", map[string]any{"callback_url": "http://a:9999", "agent_token": 5}, 400, ""},
		{"right token", map[string]any{"callback_url": "http://a:9999", "agent_token": token}, 202, ""},
	}
	for _, ver := range []string{"1.22", "1.26", "1.31", "latest"} {
		for _, tc := range tests {
			t.Run(ver+"/"+tc.name, func(t *testing.T) {
				before := len(e.cond.calls)
				r := e.must(tc.code, "POST", "/v1/heartbeat/"+id, ver, tc.body)
				if tc.msg != "" && r.Fault(t) != tc.msg {
					t.Errorf("fault %q, want %q", r.Fault(t), tc.msg)
				}
				reached := slices.Contains(e.cond.calls[before:], "heartbeat http://a:9999")
				if reached != (tc.code == 202) {
					t.Errorf("conductor reached: %v", reached)
				}
			})
		}
	}
	if strings.Contains(logs.String(), token[1:]) {
		t.Error("a token reached the log")
	}
	if !strings.Contains(logs.String(), "agent heartbeat refused: invalid agent token") {
		t.Error("refused heartbeats are not logged")
	}
}

// Conductors pinned below RPC 1.4 cannot issue tokens: lookup still
// answers (agent_token null, required) and every heartbeat is refused.
func TestLookupWithConductorCappedBelowTokens(t *testing.T) {
	e, id, logs := agentEnv(t, "wait call-back")
	e.cond.tokenCapped = true
	cfg := e.must(http.StatusOK, "GET", "/v1/lookup?node_uuid="+id, "1.22", nil).JSON(t)["config"].(map[string]any)
	if tok, ok := cfg["agent_token"]; !ok || tok != nil || cfg["agent_token_required"] != true {
		t.Fatalf("config %v", cfg)
	}
	if !strings.Contains(logs.String(), "pinned below 1.4") {
		t.Error("no warning that tokens cannot be issued")
	}
	for _, tok := range []string{"", agenttoken.Masked, "anything"} {
		e.must(http.StatusBadRequest, "POST", "/v1/heartbeat/"+id, "1.22", map[string]any{"callback_url": "http://a:9999", "agent_token": tok})
	}
}
