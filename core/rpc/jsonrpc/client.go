package jsonrpc

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rivetmetal/rivet/core/jsonraw"

	"github.com/rivetmetal/rivet/core/rpc"
)

// DefaultPort is the JSON-RPC port ([json_rpc] port), as Ironic's.
const DefaultPort = 8089

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
	// LocalHost is this service's [DEFAULT] host. A conductor registered
	// under the same name runs on this host (both default to the machine's
	// hostname), so it is dialed at LocalAddr first, then, if nothing
	// listens there, at whatever the name resolves to: a conductor
	// listening on loopback only (the default) is then reachable even where
	// the hostname resolves to a non-loopback address or to 127.0.1.1.
	// Empty disables this.
	LocalHost string
	// LocalAddr is the IP address a conductor on this host listens on
	// ([json_rpc] host_ip, its loopback counterpart when unspecified).
	LocalAddr string
}

// LocalDialAddr is the address at which a service whose [json_rpc] host_ip
// is hostIP reaches a conductor on its own host: hostIP itself, or the
// loopback address of its family when hostIP listens on every address.
func LocalDialAddr(hostIP string) string {
	ip := net.ParseIP(hostIP)
	switch {
	case ip == nil:
		return hostIP
	case ip.IsUnspecified() && ip.To4() != nil:
		return "127.0.0.1"
	case ip.IsUnspecified():
		return "::1"
	}
	return hostIP
}

// dialAddr is where addr (host:port of a registered conductor name) is
// dialed: LocalAddr when its host is LocalHost, else addr itself.
func (o *HTTPTransportOptions) dialAddr(addr string) string {
	if o.LocalHost == "" || o.LocalAddr == "" {
		return addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || !strings.EqualFold(host, o.LocalHost) {
		return addr
	}
	return net.JoinHostPort(o.LocalAddr, port)
}

// HTTPTransport sends requests as JSON-RPC 2.0 over HTTP(S), with net/http's
// client: one http.Transport per HTTPTransport, made once, whose keep-alive
// connections every call shares.
type HTTPTransport struct {
	client *http.Client
	opts   HTTPTransportOptions
	scheme string
	// auth is the Authorization header value of http_basic, made once;
	// nil without it.
	auth []string
}

// maxIdleConnsPerHost is how many idle keep-alive connections are kept per
// conductor: enough for an API's concurrent calls to one conductor to find
// one open (net/http's default, 2, would dial nearly every call under
// load).
const maxIdleConnsPerHost = 32

// contentTypeJSON is the Content-Type header value of every request,
// shared: net/http never writes to a request's header values.
var contentTypeJSON = []string{"application/json"}

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
	if opts.LocalHost != "" {
		// The URL keeps the registered name, so TLS still verifies the
		// conductor's certificate against it; only the dial moves.
		dial := tr.DialContext
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			local := opts.dialAddr(addr)
			conn, err := dial(ctx, network, local)
			if err != nil && local != addr && ctx.Err() == nil {
				return dial(ctx, network, addr)
			}
			return conn, err
		}
	}
	tr.MaxIdleConnsPerHost = maxIdleConnsPerHost
	// Conductors do not compress their replies: asking for gzip would
	// only add a header to every request and a check to every reply.
	tr.DisableCompression = true
	scheme := "http"
	if opts.TLS != nil {
		scheme = "https"
	}
	t := &HTTPTransport{client: &http.Client{Transport: tr, Timeout: opts.Timeout}, opts: opts, scheme: scheme}
	if opts.Username != "" {
		// As http.Request.SetBasicAuth writes it.
		t.auth = []string{"Basic " + base64.StdEncoding.EncodeToString([]byte(opts.Username+":"+opts.Password))}
	}
	return t
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
func (t *HTTPTransport) Send(ctx context.Context, host string, req *rpc.Request) (json.RawMessage, error) {
	// callID names this call on its resend too (CallIDHeader); a cast
	// has none.
	var id callID
	if !req.Cast {
		id = newCallID()
	}
	body, err := requestBody(req)
	if err != nil {
		return nil, err
	}
	// written records whether some attempt handed the whole request to a
	// connection: from then on a failure no longer proves the conductor did
	// nothing, even when the transport's resend then fails to dial.
	var written atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				written.Store(true)
			}
		},
	})
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL(host), bytes.NewReader(body))
	if err != nil {
		// A registered name that is no URL host (one with a space, from a
		// configuration older than the check of [DEFAULT] host): nothing was
		// sent, and no call to it ever can be.
		return nil, &rpc.UnreachableError{Host: host, Err: fmt.Errorf("%q is not a valid host name", host)}
	}
	hreq.Header["Content-Type"] = contentTypeJSON
	if t.auth != nil {
		hreq.Header["Authorization"] = t.auth
	}
	markReplayable(hreq, req.RequestID, id)
	resp, err := t.client.Do(hreq)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" && !written.Load() {
			return nil, &rpc.UnreachableError{Host: host, Err: op.Err}
		}
		return nil, fmt.Errorf("rpc %s to %s: %w", req.Method, host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		return nil, nil
	}
	data, err := readReply(resp, t.opts.MaxResponseBytes)
	if err != nil {
		return nil, fmt.Errorf("rpc %s to %s: read reply: %w", req.Method, host, err)
	}
	if int64(len(data)) > t.opts.MaxResponseBytes {
		return nil, t.tooLarge(req, host)
	}
	return reply(req, host, resp.StatusCode, data)
}

// readReply reads resp's body, at most limit+1 bytes, into one buffer of
// the announced length when there is one (a conductor's replies up to 2 KB
// or so come with Content-Length), instead of growing it as io.ReadAll
// does. The reply's result is a sub-slice of it: it is never pooled.
func readReply(resp *http.Response, limit int64) ([]byte, error) {
	n := resp.ContentLength
	if n < 0 || n > limit {
		return io.ReadAll(io.LimitReader(resp.Body, limit+1))
	}
	data := make([]byte, n, n+1)
	// net/http's body returns io.EOF with its last byte, which puts the
	// connection back in the pool (TestHTTPTransportConnectionReuse).
	if _, err := io.ReadFull(resp.Body, data); err != nil {
		return nil, err
	}
	return data, nil
}

func (t *HTTPTransport) tooLarge(req *rpc.Request, host string) error {
	return fmt.Errorf("rpc %s to %s: reply larger than %d bytes", req.Method, host, t.opts.MaxResponseBytes)
}

// reply reads a reply body: a result, or the error it carries.
func reply(req *rpc.Request, host string, status int, data []byte) (json.RawMessage, error) {
	r, err := decodeResponse(data)
	if err != nil {
		return nil, fmt.Errorf("rpc %s to %s: HTTP %d with a body that is not JSON-RPC", req.Method, host, status)
	}
	if r.Error != nil {
		return nil, wireToError(r.Error)
	}
	return r.Result, nil
}

// requestBody is the JSON-RPC 2.0 envelope of req, as Ironic's client
// sends it: the version and request id travel as reserved parameters.
//
// appendRequestBody writes it by hand when it can vouch for every byte;
// otherwise json.Marshal does, as before.
func requestBody(req *rpc.Request) ([]byte, error) {
	if body, ok := appendRequestBody(nil, req); ok {
		return body, nil
	}
	params := make(map[string]json.RawMessage, len(req.Params)+2)
	for k, v := range req.Params {
		params[k] = v
	}
	params[rpc.VersionParam], _ = json.Marshal(req.Version)
	rc := map[string]string{"request_id": req.RequestID}
	if req.User != "" {
		rc["user"] = req.User
	}
	params[rpc.ContextParam], _ = json.Marshal(rc)
	env := map[string]any{"jsonrpc": "2.0", "method": req.Method, "params": params}
	if !req.Cast {
		env["id"] = req.RequestID
	}
	body, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("rpc %s: encode: %w", req.Method, err)
	}
	return body, nil
}

// appendRequestBody appends the envelope requestBody's json.Marshal would
// write, byte for byte: members and parameters in encoding/json's order
// for map keys (sorted), the reserved parameters replacing any of the same
// name, strings that need no escaping and parameter values json.Marshal
// copies as they are (jsonraw.MarshalsVerbatim: compact, nothing HTML
// escaping rewrites), which is what Prepare's encoders produce. false when
// any of that does not hold; buf is then garbage.
//
// encoding/json compacts and HTML-escapes every raw parameter value again,
// a node included, which was most of what an RPC's envelope cost the API.
func appendRequestBody(buf []byte, req *rpc.Request) ([]byte, bool) {
	keys := make([]string, 0, len(req.Params)+2)
	size := 128 + len(req.Method) + 2*len(req.RequestID) + len(req.Version) + len(req.User)
	for k, v := range req.Params {
		if k != rpc.VersionParam && k != rpc.ContextParam {
			keys = append(keys, k)
			size += len(k) + len(v) + 4
		}
	}
	keys = append(keys, rpc.VersionParam, rpc.ContextParam)
	slices.Sort(keys)
	if buf == nil {
		buf = make([]byte, 0, size)
	}
	var ok bool
	buf = append(buf, '{')
	if !req.Cast {
		buf = append(buf, `"id":`...)
		if buf, ok = jsonraw.AppendPlainString(buf, req.RequestID); !ok {
			return buf, false
		}
		buf = append(buf, ',')
	}
	buf = append(buf, `"jsonrpc":"2.0","method":`...)
	if buf, ok = jsonraw.AppendPlainString(buf, req.Method); !ok {
		return buf, false
	}
	buf = append(buf, `,"params":{`...)
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		if buf, ok = jsonraw.AppendPlainString(buf, k); !ok {
			return buf, false
		}
		buf = append(buf, ':')
		switch k {
		case rpc.VersionParam:
			buf, ok = jsonraw.AppendPlainString(buf, req.Version)
		case rpc.ContextParam:
			buf = append(buf, `{"request_id":`...)
			buf, ok = jsonraw.AppendPlainString(buf, req.RequestID)
			if ok && req.User != "" {
				buf = append(buf, `,"user":`...)
				buf, ok = jsonraw.AppendPlainString(buf, req.User)
			}
			buf = append(buf, '}')
		default:
			v := req.Params[k]
			if ok = jsonraw.MarshalsVerbatim(v); ok {
				buf = append(buf, v...)
			}
		}
		if !ok {
			return buf, false
		}
	}
	return append(buf, "}}"...), true
}

// decodeResponse decodes a reply body as json.Unmarshal does, taking the
// usual success reply apart without it (splitResponse).
func decodeResponse(data []byte) (response, error) {
	if r, ok := splitResponse(data); ok {
		return r, nil
	}
	// A fresh value: what splitResponse read before giving up must not
	// survive, and json.RawMessage's UnmarshalJSON would write into its
	// sub-slices of data.
	var r response
	err := json.Unmarshal(data, &r)
	return r, err
}

// splitResponse reads a reply body as json.Unmarshal would into a response
// when it is a success reply as Rivet's conductors write it: valid JSON, an
// object whose keys are exactly "jsonrpc", "result" and "id", at most once
// each, jsonrpc a plain string. false for anything else (an error reply,
// a case-variant or repeated key, escapes), left to json.Unmarshal. Result
// and ID are sub-slices of data, which Send reads whole for this one reply
// and never writes to.
func splitResponse(data []byte) (response, bool) {
	var r response
	if !jsonraw.Valid(data) {
		return r, false
	}
	var buf [4]jsonraw.Member
	members, ok := jsonraw.Members(buf[:0], data)
	if !ok {
		return r, false
	}
	var seen [3]bool // jsonrpc, result, id
	for _, m := range members {
		var at int
		switch string(m.Key) {
		case `"jsonrpc"`:
			at = 0
			if r.JSONRPC, ok = jsonraw.Unquote(m.Value); !ok {
				return r, false
			}
		case `"result"`:
			at = 1
			r.Result = json.RawMessage(m.Value)
		case `"id"`:
			at = 2
			r.ID = json.RawMessage(m.Value)
		default:
			return r, false
		}
		if seen[at] {
			return r, false
		}
		seen[at] = true
	}
	return r, true
}

// markReplayable lets net/http resend a call once on a fresh connection
// when a reused keep-alive connection breaks before the first response byte
// (net/http's Request.isReplayable: a body with GetBody, which
// NewRequestWithContext sets for a *bytes.Reader, plus an Idempotency-Key
// header). Without it a POST that loses the race with a conductor closing
// an idle connection (IdleTimeout, or keep-alives disabled as it begins to
// drain) fails with EOF or "connection reset" although nobody read it.
//
// Why resending is safe: net/http never resends on a fresh connection, and
// a conductor closes a kept-alive connection without answering only when
// it holds no request on it (http.Server closes idle connections only, and
// Server.Dispatch turns a handler panic into an error reply), so the bytes
// that were lost were never dispatched. The one ambiguous case is a
// conductor process that dies while running the call (a crash, or an exit
// with the call still running after graceful_shutdown_timeout): the resend
// then meets a refused dial, and Send reports that as a plain error, not
// ErrUnreachable, so the Router does not run the call on another conductor.
//
// Not quite never dispatched: http.Server's closeIdleConns (run by
// SetKeepAlivesEnabled(false) as a conductor drains, and by Shutdown) can
// close a connection whose next request it has read but not yet marked
// active; the handler runs, its answer is lost, and the call is resent
// (about 1 call in 300 when keep-alives go off under load). So a call
// also carries its call id (CallIDHeader, made once per Send, the same on
// the resend), and a conductor that knows the header runs each call id
// once: the resend waits for the first copy's reply, or gets it from the
// conductor's reply cache (replayCache;
// TestHTTPTransportAgainstDrainingConductor). A conductor that predates
// the header ignores it and may run such a call twice, as before. Casts
// carry no call id: a resent cast may run twice.
//
// The key is the request id when there is one (it names the call in the
// conductor's log, and is shared by every RPC of one REST request);
// otherwise a nil value marks the request without sending the header.
func markReplayable(r *http.Request, requestID string, id callID) {
	if requestID != "" {
		r.Header.Set("Idempotency-Key", requestID)
	} else {
		r.Header["Idempotency-Key"] = nil
	}
	if id != (callID{}) {
		r.Header[CallIDHeader] = []string{id.String()}
	}
}
