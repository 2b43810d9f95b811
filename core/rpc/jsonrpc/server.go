package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/rivetmetal/rivet/core/htpasswd"
	"github.com/rivetmetal/rivet/core/jsonlimit"
	"github.com/rivetmetal/rivet/core/jsonraw"

	"github.com/rivetmetal/rivet/core/rpc"
)

// HTTPHandlerOptions configures the JSON-RPC HTTP endpoint.
type HTTPHandlerOptions struct {
	// Users enables http_basic auth when non-nil.
	Users *htpasswd.File
	// MaxBodyBytes bounds a request body ([json_rpc] max_request_body_size).
	MaxBodyBytes int64
	Log          *slog.Logger
	// Now is the clock of the failed-login back-off; nil means time.Now.
	Now func() time.Time
}

// NewHTTPHandler serves s as JSON-RPC 2.0 over HTTP POST at any path. A
// call that carries a call id (CallIDHeader) runs at most once however
// often it arrives (replayCache); one without is served as it always was.
func NewHTTPHandler(s *rpc.Server, opts HTTPHandlerOptions) http.Handler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 4 << 20
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &httpHandler{s: s, opts: opts, replay: newReplayCache(), logins: htpasswd.NewBackoff(opts.Now)}
}

type httpHandler struct {
	s    *rpc.Server
	opts HTTPHandlerOptions
	// replay runs each call that carries a call id once (CallIDHeader).
	replay *replayCache
	// logins counts failed logins per client (http_basic), as the REST
	// API does.
	logins *htpasswd.Backoff
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, nil, &wireError{Code: http.StatusMethodNotAllowed, Message: "Only POST is allowed"})
		return
	}
	if h.opts.Users != nil && !h.authenticate(w, r) {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, nil, &wireError{Code: http.StatusRequestEntityTooLarge,
				Message: fmt.Sprintf("Request body is larger than %d bytes", h.opts.MaxBodyBytes)})
			return
		}
		writeError(w, http.StatusBadRequest, nil, &wireError{Code: codeParseError, Message: "Cannot read request body"})
		return
	}
	req, id, werr := parseEnvelope(body)
	if werr != nil {
		writeError(w, http.StatusOK, id, werr)
		return
	}
	if req.Cast {
		if _, err := h.s.Dispatch(r.Context(), req); err != nil {
			writeError(w, http.StatusOK, id, errorToWireObj(err))
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if h.replay != nil {
		if v := r.Header[CallIDHeader]; len(v) == 1 && validCallID(v[0]) {
			h.serveOnce(w, r, req, id, v[0], body)
			return
		}
	}
	writeReply(w, h.call(r.Context(), req, id))
}

// authenticate checks r's basic credentials, answering 401 (or 429 with
// Retry-After to a client locked out after failed logins, before any
// password check) and logging the client and the user tried, never the
// password, when they do not pass.
func (h *httpHandler) authenticate(w http.ResponseWriter, r *http.Request) bool {
	client := htpasswd.ClientKey(r.RemoteAddr)
	user, pw, ok := r.BasicAuth()
	logged := user // whatever the client sent: bounded in the log
	if len(logged) > 64 {
		logged = logged[:64] + "…"
	}
	if wait := h.logins.Wait(client); wait > 0 {
		secs := max(1, int(math.Ceil(wait.Seconds())))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		h.opts.Log.Warn("json-rpc login refused: too many failed logins", "client", client, "user", logged, "retry_after_s", secs)
		writeError(w, http.StatusTooManyRequests, nil, &wireError{Code: http.StatusTooManyRequests,
			Message: fmt.Sprintf("Too many failed logins from this client; retry in %d seconds", secs)})
		return false
	}
	if !ok || !h.opts.Users.Check(user, pw) {
		if ok {
			h.logins.Failed(client)
		}
		h.opts.Log.Warn("json-rpc login failed", "client", client, "user", logged, "credentials_sent", ok)
		w.Header().Set("WWW-Authenticate", `Basic realm="rivet-json-rpc"`)
		writeError(w, http.StatusUnauthorized, nil, &wireError{Code: http.StatusUnauthorized, Message: "Unauthorized"})
		return false
	}
	h.logins.Succeeded(client)
	return true
}

// call runs a call (not a cast) and returns its encoded reply.
func (h *httpHandler) call(ctx context.Context, req *rpc.Request, id json.RawMessage) []byte {
	res, err := h.s.Dispatch(ctx, req)
	if err != nil {
		return encodeJSON(response{JSONRPC: "2.0", Error: errorToWireObj(err), ID: orNull(id)})
	}
	if res == nil {
		res = json.RawMessage("null")
	}
	return encodeResult(res, id)
}

// serveOnce serves a call that carries a call id (CallIDHeader) through
// the reply cache: the first copy of the call runs it, a copy that
// arrives while it runs waits for its reply (or for its own request's
// end), a later one gets the kept reply. The call runs under a context
// its connection closing does not end (replayCache.start): that is how
// the first copy is lost, and its resend is on its way.
func (h *httpHandler) serveOnce(w http.ResponseWriter, r *http.Request, req *rpc.Request, id json.RawMessage, callID string, body []byte) {
	e, owner := h.replay.join(callID, body)
	switch {
	case e == nil:
		if h.opts.Log != nil {
			h.opts.Log.Warn("rpc call id reused for another request; served without the reply cache",
				"call_id", callID, "rpc_method", req.Method, "request_id", req.RequestID)
		}
		writeReply(w, h.call(r.Context(), req, id))
	case owner:
		finished := false
		defer func() {
			if !finished { // a panic: no reply, and the entry goes
				h.replay.finish(e, nil)
			}
		}()
		ctx, cancel := h.replay.start(e, r.Context())
		defer cancel()
		stop := context.AfterFunc(r.Context(), func() { h.replay.leave(e) })
		reply := h.call(ctx, req, id)
		stop()
		h.replay.finish(e, reply)
		finished = true
		writeReply(w, reply)
	default:
		select {
		case <-e.ready:
		case <-r.Context().Done():
			h.replay.leave(e)
			return
		}
		if e.reply == nil {
			// The first copy ended without a reply (a panic net/http
			// recovered); so does this one: the connection closes.
			panic(http.ErrAbortHandler)
		}
		if h.opts.Log != nil {
			h.opts.Log.Info("rpc call received again; answered with the first copy's reply",
				"call_id", callID, "rpc_method", req.Method, "request_id", req.RequestID)
		}
		writeReply(w, e.reply)
	}
}

// writeReply writes an encoded call reply: JSON-RPC answers a call's
// success and its failure alike with HTTP 200.
func writeReply(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// writeResult writes a success reply (encodeResult).
func writeResult(w http.ResponseWriter, res, id json.RawMessage) {
	writeReply(w, encodeResult(res, id))
}

// encodeResult encodes a success reply exactly as
// encodeJSON(response{JSONRPC: "2.0", Result: res, ID: id}) does.
// encoding/json compacts and HTML-escapes the result again, a node
// included, although what Dispatch returns is already compact JSON; so
// when json.Marshal would copy res and id as they are
// (jsonraw.MarshalsVerbatim), the reply is written by hand.
func encodeResult(res, id json.RawMessage) []byte {
	if len(res) == 0 || !jsonraw.MarshalsVerbatim(res) || !jsonraw.MarshalsVerbatim(id) {
		return encodeJSON(response{JSONRPC: "2.0", Result: res, ID: id})
	}
	body := make([]byte, 0, len(res)+len(id)+40)
	body = append(body, `{"jsonrpc":"2.0","result":`...)
	body = append(body, res...)
	body = append(body, `,"id":`...)
	body = append(body, id...)
	return append(body, "}\n"...) // json.Encoder ends each value with a newline
}

// parseEnvelope validates a JSON-RPC request body. Errors come back in
// Ironic's shapes: -32700 for bad JSON, -32600 for a batch, a wrong version,
// a missing method or non-object params, and (strict decoding) for nesting
// deeper than jsonlimit.RPCMaxDepth, a repeated key, invalid UTF-8 or an
// envelope member JSON-RPC 2.0 does not define.
//
// Every RPC a conductor serves comes through here, so the usual envelope is
// taken apart without encoding/json (splitEnvelope, splitParams, and the
// plain-string readings of rpc.version and context); anything unusual goes
// through encoding/json as before, piece by piece, so the request and the
// error (code, message, id) are the same either way. The request's params
// and id are sub-slices of body, which the caller reads whole for this one
// request and never writes to.
func parseEnvelope(body []byte) (*rpc.Request, json.RawMessage, *wireError) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return nil, nil, &wireError{Code: codeInvalidRequest, Message: "Batch requests are not supported"}
	}
	env, ok := splitEnvelope(body)
	if !ok {
		var werr *wireError
		if env, werr = decodeEnvelope(body); werr != nil {
			return nil, nil, werr
		}
	}
	id := env.ID
	if env.JSONRPC != "2.0" {
		return nil, id, &wireError{Code: codeInvalidRequest, Message: `Expected jsonrpc: "2.0"`}
	}
	if env.Method == "" {
		return nil, id, &wireError{Code: codeInvalidRequest, Message: "Missing method"}
	}
	params, ok := splitParams(env.Params)
	if !ok {
		if err := json.Unmarshal(env.Params, &params); err != nil || params == nil {
			return nil, id, &wireError{Code: codeInvalidRequest, Message: "Params must be an object"}
		}
	}
	req := &rpc.Request{Method: env.Method, Params: params, Cast: len(id) == 0 || string(id) == "null"}
	if raw, ok := params[rpc.VersionParam]; ok {
		if s, plain := jsonraw.Unquote(raw); plain {
			req.Version = s
		} else if err := json.Unmarshal(raw, &req.Version); err != nil {
			return nil, id, &wireError{Code: codeInvalidParams, Message: "rpc.version must be a string"}
		}
		delete(params, rpc.VersionParam)
	}
	if raw, ok := params[rpc.ContextParam]; ok {
		if s, plain := splitRequestID(raw); plain {
			req.RequestID = s
		} else {
			var rc struct {
				RequestID string `json:"request_id"`
				User      string `json:"user"`
			}
			_ = json.Unmarshal(raw, &rc)
			req.RequestID, req.User = rc.RequestID, rc.User
		}
		delete(params, rpc.ContextParam)
	}
	return req, id, nil
}

// decodeEnvelope is the envelope as encoding/json reads it: a body it
// cannot decode is -32700; one jsonlimit refuses, or with a member the
// envelope does not define, is -32600.
func decodeEnvelope(body []byte) (envelope, *wireError) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return env, &wireError{Code: codeParseError, Message: "Parse error: " + jsonlimit.Describe(err)}
	}
	if err := jsonlimit.Check(body, jsonlimit.RPCMaxDepth); err != nil {
		return env, &wireError{Code: codeInvalidRequest, Message: "Invalid request: " + jsonlimit.Describe(err)}
	}
	strict := json.NewDecoder(bytes.NewReader(body))
	strict.DisallowUnknownFields()
	if err := strict.Decode(new(envelope)); err != nil {
		return env, &wireError{Code: codeInvalidRequest, Message: "Invalid request: " + jsonlimit.Describe(err)}
	}
	return env, nil
}

// splitEnvelope reads body as decodeEnvelope would when that cannot fail
// and needs no decoding: jsonlimit accepts body (so it is UTF-8, one
// well-formed value, no key repeated), it is an object whose keys are
// exactly "jsonrpc", "method", "params" or "id" (encoding/json would also
// match "Method" or "ID", and refuse another), and jsonrpc and method are
// plain strings (no escapes). false for anything else, left to
// decodeEnvelope.
func splitEnvelope(body []byte) (envelope, bool) {
	var env envelope
	if jsonlimit.Check(body, jsonlimit.RPCMaxDepth) != nil {
		return env, false
	}
	var buf [4]jsonraw.Member
	members, ok := jsonraw.Members(buf[:0], body)
	if !ok {
		return env, false
	}
	for _, m := range members {
		switch string(m.Key) {
		case `"jsonrpc"`:
			if env.JSONRPC, ok = jsonraw.Unquote(m.Value); !ok {
				return env, false
			}
		case `"method"`:
			if env.Method, ok = jsonraw.Unquote(m.Value); !ok {
				return env, false
			}
		case `"params"`:
			env.Params = json.RawMessage(m.Value)
		case `"id"`:
			env.ID = json.RawMessage(m.Value)
		default:
			return env, false
		}
	}
	return env, true
}

// splitParams reads params, part of a body jsonlimit accepted, as
// json.Unmarshal would into a map when it is an object whose keys are
// plain strings; false for anything else (absent, null, not an object, a
// key with an escape). The values are sub-slices of params.
func splitParams(params json.RawMessage) (map[string]json.RawMessage, bool) {
	var buf [16]jsonraw.Member
	members, ok := jsonraw.Members(buf[:0], params)
	if !ok {
		return nil, false
	}
	out := make(map[string]json.RawMessage, len(members))
	for _, m := range members {
		k, ok := jsonraw.Unquote(m.Key)
		if !ok {
			return nil, false
		}
		out[k] = json.RawMessage(m.Value)
	}
	return out, true
}

// splitRequestID reads the context parameter, part of a body jsonlimit
// accepted, when it is what Rivet's client sends: an object with at most a
// "request_id" member, a plain string. false for anything else (another
// member, which encoding/json may match case-insensitively, a value that
// is not a plain string), left to json.Unmarshal.
func splitRequestID(raw json.RawMessage) (string, bool) {
	var buf [2]jsonraw.Member
	members, ok := jsonraw.Members(buf[:0], raw)
	if !ok || len(members) > 1 {
		return "", false
	}
	if len(members) == 0 {
		return "", true
	}
	if string(members[0].Key) != `"request_id"` {
		return "", false
	}
	return jsonraw.Unquote(members[0].Value)
}

// errorToWireObj maps a dispatch error to its JSON-RPC error object: the
// class, code and message rpc.ErrorToWire gives it, the class namespaced
// (classPrefix); a protocol error (no class) carries no data.
func errorToWireObj(err error) *wireError {
	class, code, msg := rpc.ErrorToWire(err)
	w := &wireError{Code: code, Message: msg}
	if class != "" {
		w.Data = &wireErrorData{Class: classPrefix + class}
	}
	return w
}

func writeError(w http.ResponseWriter, status int, id json.RawMessage, e *wireError) {
	writeJSON(w, status, response{JSONRPC: "2.0", Error: e, ID: orNull(id)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// encodeJSON is what writeJSON writes for v.
func encodeJSON(v any) []byte {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(v)
	return b.Bytes()
}

func orNull(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}
