package jsonrpc

import (
	"encoding/json"
	"strings"

	"github.com/rivetmetal/rivet/core/rpc"
)

// JSON-RPC 2.0 protocol error codes (as Ironic's server uses them).
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = rpc.CodeMethodNotFound
	codeInvalidParams  = rpc.CodeInvalidParams
)

// classPrefix namespaces error classes on the wire, as Ironic's
// "ironic.common.exception." does; only prefixed classes are rebuilt.
const classPrefix = "rivet.exception."

// envelope is a JSON-RPC 2.0 request.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	ID      json.RawMessage `json:"id,omitempty"`
}

// response is a JSON-RPC 2.0 response.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *wireError      `json:"error,omitempty"`
	ID      json.RawMessage `json:"id"`
}

type wireError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    *wireErrorData `json:"data,omitempty"`
}

type wireErrorData struct {
	Class string `json:"class"`
}

// wireToError turns a JSON-RPC error object into a Go error.
func wireToError(w *wireError) error {
	if w.Data != nil && strings.HasPrefix(w.Data.Class, classPrefix) {
		return rpc.ErrorFromWire(strings.TrimPrefix(w.Data.Class, classPrefix), w.Code, w.Message)
	}
	return &rpc.ProtocolError{Code: w.Code, Message: w.Message}
}
