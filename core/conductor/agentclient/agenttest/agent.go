// Package agenttest is a fake ironic-python-agent for tests and
// benchmarks: it serves the agent's command API (POST and GET
// /v1/commands/) with the agent's JSON shapes, checks the agent token, runs
// each command through a handler the test chooses (asynchronously, as IPA
// runs its long commands), and can look its node up and heartbeat to a
// Rivet API as IPA does. It is test code: it writes nothing anywhere.
package agenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Handler runs one command: its result, or an error the agent reports as
// command_error. It runs in its own goroutine; the command is RUNNING until
// it returns.
type Handler func(ctx context.Context, params map[string]any) (map[string]any, error)

// Agent is one fake agent.
type Agent struct {
	// Token is the agent token the commands must present ("" accepts any).
	Token string
	// Delay is how long every command runs before its handler (0: none).
	Delay time.Duration
	// BeforeStatus, when set, runs before the agent answers a command
	// status request (GET /v1/commands), as long as it takes: a test
	// holds the conductor's status check there.
	BeforeStatus func(*http.Request)

	mu       sync.Mutex
	handlers map[string]Handler
	commands []*command
	busy     bool
	received []string // command names, as received

	srv *httptest.Server
}

type command struct {
	Name   string         `json:"command_name"`
	Params map[string]any `json:"command_params"`
	Status string         `json:"command_status"`
	Error  any            `json:"command_error"`
	Result map[string]any `json:"command_result"`
	done   chan struct{}
}

// New returns an agent whose every command succeeds with an empty result
// unless Handle says otherwise.
func New() *Agent { return &Agent{handlers: map[string]Handler{}} }

// Handle sets the handler of command ("deploy.execute_deploy_step").
func (a *Agent) Handle(name string, h Handler) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.handlers[name] = h
}

// Received lists the commands received, in order.
func (a *Agent) Received() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.received...)
}

// Start serves the agent on a loopback port; it stops with Close.
func (a *Agent) Start() string {
	a.srv = httptest.NewServer(a)
	return a.srv.URL
}

// StartTLS serves the agent over HTTPS with a self-signed certificate
// (as IPA's auto-TLS); it returns the URL and the PEM to verify it with.
func (a *Agent) StartTLS() (string, string) {
	a.srv = httptest.NewTLSServer(a)
	return a.srv.URL, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.srv.Certificate().Raw}))
}

// Close stops serving; running commands are left to finish.
func (a *Agent) Close() {
	if a.srv != nil {
		a.srv.Close()
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// ServeHTTP implements IPA's /v1/commands/.
func (a *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.TrimRight(r.URL.Path, "/") != "/v1/commands" {
		writeJSON(w, http.StatusNotFound, map[string]any{"faultstring": "Not found"})
		return
	}
	if a.Token != "" && r.URL.Query().Get("agent_token") != a.Token {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"faultstring": "Invalid or missing agent_token"})
		return
	}
	switch r.Method {
	case http.MethodGet:
		if a.BeforeStatus != nil {
			a.BeforeStatus(r)
		}
		a.mu.Lock()
		out := make([]command, len(a.commands))
		for i, c := range a.commands {
			out[i] = *c
		}
		a.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"commands": out})
	case http.MethodPost:
		var req struct {
			Name   string         `json:"name"`
			Params map[string]any `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Name == "" {
			writeJSON(w, http.StatusBadRequest, map[string]any{"faultstring": "Invalid command body"})
			return
		}
		a.mu.Lock()
		a.received = append(a.received, req.Name)
		if a.busy {
			a.mu.Unlock()
			writeJSON(w, http.StatusConflict, map[string]any{"faultstring": "Agent is busy"})
			return
		}
		h := a.handlers[req.Name]
		_, short, _ := strings.Cut(req.Name, ".")
		c := &command{Name: short, Params: req.Params, Status: "RUNNING", done: make(chan struct{})}
		a.commands = append(a.commands, c)
		a.busy = true
		a.mu.Unlock()
		go a.run(c, h)
		if r.URL.Query().Get("wait") == "true" {
			<-c.done
		}
		a.mu.Lock()
		snap := *c
		a.mu.Unlock()
		writeJSON(w, http.StatusOK, snap)
	default:
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"faultstring": "Method not allowed"})
	}
}

func (a *Agent) run(c *command, h Handler) {
	if a.Delay > 0 {
		time.Sleep(a.Delay)
	}
	var res map[string]any
	var err error
	if h != nil {
		res, err = h(context.Background(), c.Params)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.busy = false
	if err != nil {
		c.Status, c.Error = "FAILED", map[string]any{"type": "CommandExecutionError", "code": 500,
			"message": "Command execution failed", "details": err.Error()}
	} else {
		c.Status, c.Result = "SUCCEEDED", res
	}
	close(c.done)
}

// Heartbeat sends one heartbeat for node to the API at apiURL, as IPA:
// callback_url (this agent's URL), agent_token, agent_version, and
// agent_verify_ca when given, with the API version header version.
func Heartbeat(ctx context.Context, hc *http.Client, apiURL, version, node string, body map[string]any) (int, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, apiURL+"/v1/heartbeat/"+url.PathEscape(node), bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Lookup looks a node up by MAC address as IPA does and returns its UUID
// and the agent token from config.agent_token.
func Lookup(ctx context.Context, hc *http.Client, apiURL, version string, macs ...string) (node, token string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, apiURL+"/v1/lookup?addresses="+url.QueryEscape(strings.Join(macs, ",")), nil)
	if err != nil {
		return "", "", err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	resp, err := hc.Do(req)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("lookup: HTTP %d", resp.StatusCode)
	}
	var out struct {
		Node struct {
			UUID string `json:"uuid"`
		} `json:"node"`
		Config struct {
			AgentToken *string `json:"agent_token"`
		} `json:"config"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", "", err
	}
	if out.Config.AgentToken != nil {
		token = *out.Config.AgentToken
	}
	return out.Node.UUID, token, nil
}
