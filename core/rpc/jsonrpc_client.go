package rpc

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// DefaultPort is the JSON-RPC port ([json_rpc] port), as Ironic's.
const DefaultPort = 8089

// ErrUnreachable marks a call that never reached a conductor (the connection
// could not be made), so it is safe to retry on another one.
var ErrUnreachable = errors.New("conductor unreachable")

// UnreachableError wraps the dial failure for one conductor.
type UnreachableError struct {
	Host string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("conductor %s unreachable: %v", e.Host, e.Err)
}
func (e *UnreachableError) Unwrap() []error { return []error{ErrUnreachable, e.Err} }

// HTTPTransportOptions configures the JSON-RPC client.
type HTTPTransportOptions struct {
	// TLS enables https with this configuration (CA pool, minimum version).
	TLS *tls.Config
	// Username and Password enable http_basic auth.
	Username, Password string
	// Timeout bounds one call ([json_rpc] timeout); ctx deadlines also apply.
	Timeout time.Duration
	// Port is used for hosts registered without one (default DefaultPort).
	Port int
	// MaxResponseBytes bounds a reply body (default 64 MiB).
	MaxResponseBytes int64
}

// HTTPTransport sends requests as JSON-RPC 2.0 over HTTP(S).
type HTTPTransport struct {
	client *http.Client
	opts   HTTPTransportOptions
	scheme string
}

// NewHTTPTransport returns a transport with keep-alive connections.
func NewHTTPTransport(opts HTTPTransportOptions) *HTTPTransport {
	if opts.Port == 0 {
		opts.Port = DefaultPort
	}
	if opts.MaxResponseBytes == 0 {
		opts.MaxResponseBytes = 64 << 20
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = opts.TLS
	tr.MaxIdleConnsPerHost = 32
	scheme := "http"
	if opts.TLS != nil {
		scheme = "https"
	}
	return &HTTPTransport{client: &http.Client{Transport: tr, Timeout: opts.Timeout}, opts: opts, scheme: scheme}
}

// URL returns the endpoint for a registered conductor name.
func (t *HTTPTransport) URL(host string) string {
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(trimBrackets(host), strconv.Itoa(t.opts.Port))
	}
	return t.scheme + "://" + host + "/"
}

func trimBrackets(h string) string {
	if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
		return h[1 : len(h)-1]
	}
	return h
}

// Send implements Transport.
func (t *HTTPTransport) Send(ctx context.Context, host string, req *Request) (json.RawMessage, error) {
	params := make(map[string]json.RawMessage, len(req.Params)+2)
	for k, v := range req.Params {
		params[k] = v
	}
	params[versionKey], _ = json.Marshal(req.Version)
	params[contextKey], _ = json.Marshal(map[string]string{"request_id": req.RequestID})
	env := map[string]any{"jsonrpc": "2.0", "method": req.Method, "params": params}
	if !req.Cast {
		env["id"] = req.RequestID
	}
	body, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("rpc %s: encode: %w", req.Method, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL(host), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("rpc %s to %s: %w", req.Method, host, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if t.opts.Username != "" {
		hreq.SetBasicAuth(t.opts.Username, t.opts.Password)
	}
	resp, err := t.client.Do(hreq)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return nil, &UnreachableError{Host: host, Err: op.Err}
		}
		return nil, fmt.Errorf("rpc %s to %s: %w", req.Method, host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		return nil, nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, t.opts.MaxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("rpc %s to %s: read reply: %w", req.Method, host, err)
	}
	if int64(len(data)) > t.opts.MaxResponseBytes {
		return nil, fmt.Errorf("rpc %s to %s: reply larger than %d bytes", req.Method, host, t.opts.MaxResponseBytes)
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("rpc %s to %s: HTTP %d with a body that is not JSON-RPC", req.Method, host, resp.StatusCode)
	}
	if r.Error != nil {
		return nil, wireToError(r.Error)
	}
	return r.Result, nil
}

// LocalTransport calls a Server in the same process (all-in-one). Requests
// and errors take the same path as over the wire: versions are checked,
// arguments stay encoded and errors keep only class, code and message.
type LocalTransport struct{ Server *Server }

// Send implements Transport; host is ignored.
func (t LocalTransport) Send(ctx context.Context, _ string, req *Request) (json.RawMessage, error) {
	res, err := t.Server.Dispatch(ctx, req)
	if err != nil {
		w := errorToWireObj(err)
		if w.Code == codeMethodNotFound {
			return nil, &ProtocolError{Code: w.Code, Message: w.Message}
		}
		return nil, wireToError(w)
	}
	return res, nil
}
