package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/rivetmetal/rivet/core/htpasswd"
	"github.com/rivetmetal/rivet/core/jsonlimit"
)

// HTTPHandlerOptions configures the JSON-RPC HTTP endpoint.
type HTTPHandlerOptions struct {
	// Users enables http_basic auth when non-nil.
	Users *htpasswd.File
	// MaxBodyBytes bounds a request body ([json_rpc] max_request_body_size).
	MaxBodyBytes int64
	Log          *slog.Logger
}

// NewHTTPHandler serves s as JSON-RPC 2.0 over HTTP POST at any path.
func NewHTTPHandler(s *Server, opts HTTPHandlerOptions) http.Handler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 4 << 20
	}
	return &httpHandler{s: s, opts: opts}
}

type httpHandler struct {
	s    *Server
	opts HTTPHandlerOptions
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, nil, &wireError{Code: http.StatusMethodNotAllowed, Message: "Only POST is allowed"})
		return
	}
	if h.opts.Users != nil {
		user, pw, ok := r.BasicAuth()
		if !ok || !h.opts.Users.Check(user, pw) {
			w.Header().Set("WWW-Authenticate", `Basic realm="rivet-json-rpc"`)
			writeError(w, http.StatusUnauthorized, nil, &wireError{Code: http.StatusUnauthorized, Message: "Unauthorized"})
			return
		}
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
	res, err := h.s.Dispatch(r.Context(), req)
	if req.Cast {
		if err != nil {
			writeError(w, http.StatusOK, id, errorToWireObj(err))
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if err != nil {
		writeError(w, http.StatusOK, id, errorToWireObj(err))
		return
	}
	if res == nil {
		res = json.RawMessage("null")
	}
	writeJSON(w, http.StatusOK, response{JSONRPC: "2.0", Result: res, ID: id})
}

// parseEnvelope validates a JSON-RPC request body. Errors come back in
// Ironic's shapes: -32700 for bad JSON, -32600 for a batch, a wrong version,
// a missing method or non-object params, and (strict decoding) for nesting
// deeper than jsonlimit's default, a repeated key, invalid UTF-8 or an
// envelope member JSON-RPC 2.0 does not define.
func parseEnvelope(body []byte) (*Request, json.RawMessage, *wireError) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return nil, nil, &wireError{Code: codeInvalidRequest, Message: "Batch requests are not supported"}
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, nil, &wireError{Code: codeParseError, Message: "Parse error: " + err.Error()}
	}
	id := env.ID
	if err := jsonlimit.Check(body, jsonlimit.DefaultMaxDepth); err != nil {
		return nil, nil, &wireError{Code: codeInvalidRequest, Message: "Invalid request: " + err.Error()}
	}
	strict := json.NewDecoder(bytes.NewReader(body))
	strict.DisallowUnknownFields()
	if err := strict.Decode(new(envelope)); err != nil {
		return nil, nil, &wireError{Code: codeInvalidRequest, Message: "Invalid request: " + err.Error()}
	}
	if env.JSONRPC != "2.0" {
		return nil, id, &wireError{Code: codeInvalidRequest, Message: `Expected jsonrpc: "2.0"`}
	}
	if env.Method == "" {
		return nil, id, &wireError{Code: codeInvalidRequest, Message: "Missing method"}
	}
	var params map[string]json.RawMessage
	if err := json.Unmarshal(env.Params, &params); err != nil || params == nil {
		return nil, id, &wireError{Code: codeInvalidRequest, Message: "Params must be an object"}
	}
	req := &Request{Method: env.Method, Params: params, Cast: len(id) == 0 || string(id) == "null"}
	if raw, ok := params[versionKey]; ok {
		if err := json.Unmarshal(raw, &req.Version); err != nil {
			return nil, id, &wireError{Code: codeInvalidParams, Message: "rpc.version must be a string"}
		}
		delete(params, versionKey)
	}
	if raw, ok := params[contextKey]; ok {
		var rc struct {
			RequestID string `json:"request_id"`
		}
		_ = json.Unmarshal(raw, &rc)
		req.RequestID = rc.RequestID
		delete(params, contextKey)
	}
	return req, id, nil
}

// errorToWireObj maps a dispatch error to its JSON-RPC error object.
func errorToWireObj(err error) *wireError {
	var nf *MethodNotFoundError
	if errors.As(err, &nf) {
		return &wireError{Code: codeMethodNotFound, Message: nf.Error()}
	}
	var ip *InvalidParamsError
	if errors.As(err, &ip) {
		return &wireError{Code: codeInvalidParams, Message: ip.Error(), Data: &wireErrorData{Class: classPrefix + ip.ErrorClass()}}
	}
	class, code, msg, _ := errorToWire(err)
	return &wireError{Code: code, Message: msg, Data: &wireErrorData{Class: classPrefix + class}}
}

func writeError(w http.ResponseWriter, status int, id json.RawMessage, e *wireError) {
	writeJSON(w, status, response{JSONRPC: "2.0", Error: e, ID: orNull(id)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func orNull(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}
