// Package agentclient is the conductor's client of the ironic-python-agent
// (IPA) command API, as Ironic's agent_client speaks it:
//
//   - POST {agent_url}/v1/commands/?wait=false&agent_token=… with
//     {"name": "<extension>.<command>", "params": {…}} starts a command;
//     the agent answers the command's status (RUNNING for an asynchronous
//     one, or its result when it finished at once);
//   - GET {agent_url}/v1/commands/?agent_token=… lists the commands run
//     since the agent started, the last one last; the conductor polls it
//     for an asynchronous command's end.
//
// A command that failed carries command_error, an object whose details (or
// message) is the agent's error. The agent answers 409, or a fault naming
// "agent is busy", while a command runs: ErrBusy. Connection failures are
// retried (MaxAttempts) with a fresh connection; an HTTP error status is
// not. The agent's URL is https when it serves TLS (IPA's auto-TLS, when
// the API offers 1.68): the certificate it sent as agent_verify_ca is then
// the only root trusted.
//
// The token travels only in the query string of requests to the agent,
// never in a log line or an error: errors name the node, the command and
// the URL without its query.
package agentclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Command statuses the agent reports.
const (
	StatusRunning   = "RUNNING"
	StatusSucceeded = "SUCCEEDED"
	StatusFailed    = "FAILED"
)

// Target is one agent: where it listens and how it proves itself.
type Target struct {
	// Node is the node's UUID (for errors and logs).
	Node string
	// URL is the agent's callback_url ("http://10.0.0.5:9999").
	URL string
	// Token is the node's agent token, sent as agent_token.
	Token string
	// VerifyCA is the PEM certificate the agent sent as agent_verify_ca;
	// "" trusts the system's roots (for an https URL).
	VerifyCA string
}

// Command is one command's status as the agent reports it.
type Command struct {
	Name   string          `json:"command_name"`
	Status string          `json:"command_status"`
	Error  json.RawMessage `json:"command_error,omitempty"`
	Result map[string]any  `json:"command_result,omitempty"`
	Params map[string]any  `json:"command_params,omitempty"`
}

// Failed reports whether the command ended in failure.
func (c *Command) Failed() bool {
	return c.Status == StatusFailed || (len(c.Error) > 0 && string(c.Error) != "null")
}

// ErrorText is the agent's error for a failed command: command_error's
// details, else its message, else the error as the agent wrote it.
func (c *Command) ErrorText() string {
	if len(c.Error) == 0 || string(c.Error) == "null" {
		if c.Status == StatusFailed {
			return "the agent reported the command failed without an error"
		}
		return ""
	}
	var obj struct {
		Details string `json:"details"`
		Message string `json:"message"`
	}
	if json.Unmarshal(c.Error, &obj) == nil {
		if obj.Details != "" {
			return obj.Details
		}
		if obj.Message != "" {
			return obj.Message
		}
	}
	var s string
	if json.Unmarshal(c.Error, &s) == nil {
		return s
	}
	return string(c.Error)
}

// Errors.
var (
	// ErrBusy: the agent is running another command (409).
	ErrBusy = errors.New("the agent is busy running another command")
	// ErrUnreachable: every attempt to connect failed.
	ErrUnreachable = errors.New("agent unreachable")
)

// APIError is an HTTP error status from the agent.
type APIError struct {
	Node, Command string
	Status        int
	Fault         string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("Agent API for node %s returned HTTP status code %d with error: %s (command %s)", e.Node, e.Status, e.Fault, e.Command)
}

// CommandError is a command that ended in failure.
type CommandError struct {
	Node, Command string
	// Message is the agent's error (Command.ErrorText).
	Message string
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("Agent returned error for %s on node %s: %s", e.Command, e.Node, e.Message)
}

// Client talks to agents. The zero value is not usable: use New.
type Client struct {
	// CommandTimeout bounds each HTTP request ([agent] command_timeout).
	CommandTimeout time.Duration
	// MaxAttempts is how many times a request that could not connect is
	// tried ([agent] max_command_attempts).
	MaxAttempts int
	// PollInterval is the pause between two status polls of a command
	// Run waits for ([agent] command_wait_interval).
	PollInterval time.Duration
	// PollAttempts bounds the polls of Run ([agent] command_wait_attempts).
	PollAttempts int

	mu         sync.Mutex
	transports map[[32]byte]*http.Transport // by VerifyCA digest
	plain      *http.Transport
}

// Defaults are Ironic's [agent] defaults, but for the poll interval: the
// agent's commands here last seconds, so Run polls every second.
const (
	DefaultCommandTimeout = 60 * time.Second
	DefaultMaxAttempts    = 3
	DefaultPollInterval   = time.Second
	DefaultPollAttempts   = 600
)

// maxTransports bounds the per-certificate transports kept for reuse;
// past it they are dropped (agents reboot with new certificates).
const maxTransports = 4096

// New returns a client with Ironic's defaults.
func New() *Client {
	return &Client{CommandTimeout: DefaultCommandTimeout, MaxAttempts: DefaultMaxAttempts,
		PollInterval: DefaultPollInterval, PollAttempts: DefaultPollAttempts}
}

func newTransport(roots *x509.CertPool) *http.Transport {
	return &http.Transport{
		Proxy:               nil, // agents sit on the provisioning network
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots},
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
}

// transport returns the transport for t: one per agent certificate, so a
// self-signed agent certificate is the only root trusted for that agent.
// IPA's certificate names the agent's IP address, which is what the
// callback URL holds.
func (c *Client) transport(t Target) (*http.Transport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.VerifyCA == "" {
		if c.plain == nil {
			c.plain = newTransport(nil)
		}
		return c.plain, nil
	}
	key := sha256.Sum256([]byte(t.VerifyCA))
	if tr, ok := c.transports[key]; ok {
		return tr, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(t.VerifyCA)) {
		return nil, fmt.Errorf("agent of node %s: agent_verify_ca holds no PEM certificate", t.Node)
	}
	if c.transports == nil || len(c.transports) >= maxTransports {
		for _, tr := range c.transports {
			tr.CloseIdleConnections()
		}
		c.transports = map[[32]byte]*http.Transport{}
	}
	tr := newTransport(pool)
	c.transports[key] = tr
	return tr, nil
}

// commandsURL is {agent_url}/v1/commands/ with query q.
func commandsURL(t Target, q url.Values) (string, error) {
	u, err := url.Parse(strings.TrimRight(t.URL, "/") + "/v1/commands/")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("agent of node %s: callback URL is not an http(s) URL", t.Node)
	}
	if t.Token != "" {
		q.Set("agent_token", t.Token)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// do sends one request, retrying connection failures; it decodes a 2xx
// body into out and turns any other status into *APIError or ErrBusy.
func (c *Client) do(ctx context.Context, t Target, method, command string, q url.Values, body []byte, out any) error {
	tr, err := c.transport(t)
	if err != nil {
		return err
	}
	u, err := commandsURL(t, q)
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: tr, Timeout: c.CommandTimeout}
	attempts := max(c.MaxAttempts, 1)
	var lastErr error
	for i := range attempts {
		if i > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(i) * 500 * time.Millisecond):
			}
		}
		req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			lastErr = redact(err)
			continue
		}
		data, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		if rerr != nil {
			lastErr = rerr
			continue
		}
		if resp.StatusCode >= 400 {
			var fault struct {
				Faultstring string `json:"faultstring"`
			}
			_ = json.Unmarshal(data, &fault)
			if resp.StatusCode == http.StatusConflict || strings.Contains(strings.ToLower(fault.Faultstring), "agent is busy") {
				return fmt.Errorf("node %s, command %s: %w: %s", t.Node, command, ErrBusy, fault.Faultstring)
			}
			return &APIError{Node: t.Node, Command: command, Status: resp.StatusCode, Fault: fault.Faultstring}
		}
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("agent of node %s, command %s: the answer (HTTP %d) is not JSON: %w", t.Node, command, resp.StatusCode, err)
		}
		return nil
	}
	return fmt.Errorf("node %s, command %s: %w after %d attempts: %v", t.Node, command, ErrUnreachable, attempts, lastErr)
}

// redact drops the URL (and so the token in its query) from a transport
// error.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}

// Execute starts command (extension.name) with params. With wait the agent
// answers when it finished (for quick commands); otherwise an asynchronous
// command answers RUNNING. A command that failed at once is a
// *CommandError.
func (c *Client) Execute(ctx context.Context, t Target, command string, params map[string]any, wait bool) (*Command, error) {
	if params == nil {
		params = map[string]any{}
	}
	body, err := json.Marshal(map[string]any{"name": command, "params": params})
	if err != nil {
		return nil, err
	}
	q := url.Values{"wait": {fmt.Sprint(wait)}}
	var out Command
	if err := c.do(ctx, t, http.MethodPost, command, q, body, &out); err != nil {
		return nil, err
	}
	if out.Failed() {
		return &out, &CommandError{Node: t.Node, Command: command, Message: out.ErrorText()}
	}
	return &out, nil
}

// Commands lists the commands the agent ran since it started, oldest first.
func (c *Client) Commands(ctx context.Context, t Target) ([]Command, error) {
	var out struct {
		Commands []Command `json:"commands"`
	}
	if err := c.do(ctx, t, http.MethodGet, "status", url.Values{}, nil, &out); err != nil {
		return nil, err
	}
	return out.Commands, nil
}

// Last returns the status of the last command the agent ran when it is
// command (its name without the extension, as the agent lists it), nil
// otherwise.
func (c *Client) Last(ctx context.Context, t Target, command string) (*Command, error) {
	cmds, err := c.Commands(ctx, t)
	if err != nil || len(cmds) == 0 {
		return nil, err
	}
	last := cmds[len(cmds)-1]
	if last.Name != shortName(command) {
		return nil, nil
	}
	return &last, nil
}

// shortName is a command's name as the agent lists it: without the
// extension ("execute_deploy_step" for "deploy.execute_deploy_step").
func shortName(command string) string {
	if _, after, ok := strings.Cut(command, "."); ok {
		return after
	}
	return command
}

// Run executes command and polls until it is no longer running, at most
// PollAttempts times PollInterval: the command's final status, or a
// *CommandError when it failed. For commands that run seconds; a deploy
// or clean step is instead started with Execute and checked on heartbeats.
func (c *Client) Run(ctx context.Context, t Target, command string, params map[string]any) (*Command, error) {
	cmd, err := c.Execute(ctx, t, command, params, false)
	if err != nil || cmd.Status != StatusRunning {
		return cmd, err
	}
	for range max(c.PollAttempts, 1) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(c.PollInterval):
		}
		last, err := c.Last(ctx, t, command)
		if err != nil {
			return nil, err
		}
		if last == nil {
			return nil, fmt.Errorf("agent of node %s: command %s is no longer the agent's last command", t.Node, command)
		}
		if last.Status == StatusRunning {
			continue
		}
		if last.Failed() {
			return last, &CommandError{Node: t.Node, Command: command, Message: last.ErrorText()}
		}
		return last, nil
	}
	return nil, fmt.Errorf("agent of node %s: command %s still running after %d polls", t.Node, command, c.PollAttempts)
}
