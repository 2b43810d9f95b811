package rpc

import (
	"context"
	"encoding/json"
)

// Reserved parameter names on the wire (as Ironic's JSON-RPC): a transport
// carries a request's version and request id under them, so no method
// argument may take either name (NewMethods).
const (
	VersionParam = "rpc.version"
	ContextParam = "context"
)

// Request is one RPC in transport-neutral form.
type Request struct {
	Method string
	// Version is the RPC version the client chose for this call.
	Version string
	// Params holds the encoded arguments (objects already as primitives).
	Params map[string]json.RawMessage
	// RequestID travels into the server's logs and back in errors.
	RequestID string
	// User is the API user the call acts for ("" when none: noauth, a
	// periodic task); conductors record it in node history. It travels in
	// the context parameter, which older conductors read only the
	// request_id of.
	User string
	// Cast marks a fire-and-forget call: the server answers before running it.
	Cast bool
}

// ObjectCodec converts versioned objects at the RPC boundary. The versioned
// core provides one; Encode sends at the pinned (or latest) version and
// Decode converts to latest, keeping changes only when server is true
// (reference/ironic.md §2.1).
type ObjectCodec interface {
	// Encode returns the wire form of v and true when v is a versioned
	// object, or false when v is plain data to be JSON-encoded.
	Encode(v any) (json.RawMessage, bool, error)
	// IsObject reports whether raw is an object primitive.
	IsObject(raw json.RawMessage) bool
	// Decode hydrates an object primitive at latest.
	Decode(raw json.RawMessage, server bool) (any, error)
}

// PlainCodec is an ObjectCodec for tables without versioned objects.
type PlainCodec struct{}

// Encode implements ObjectCodec: nothing is an object.
func (PlainCodec) Encode(any) (json.RawMessage, bool, error) { return nil, false, nil }

// IsObject implements ObjectCodec.
func (PlainCodec) IsObject(json.RawMessage) bool { return false }

// Decode implements ObjectCodec; it is never called.
func (PlainCodec) Decode(json.RawMessage, bool) (any, error) { return nil, nil }

func encodeValue(codec ObjectCodec, v any) (json.RawMessage, error) {
	if raw, ok, err := codec.Encode(v); ok || err != nil {
		return raw, err
	}
	return json.Marshal(v)
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id of the REST request (or
// RPC) being served, so it reaches the conductor's logs.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

type userKey struct{}

// WithUser returns ctx carrying the API user a call acts for.
func WithUser(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, userKey{}, user)
}

// User returns the API user ctx carries, or "".
func User(ctx context.Context) string {
	u, _ := ctx.Value(userKey{}).(string)
	return u
}

// RequestID returns the request id ctx carries, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
