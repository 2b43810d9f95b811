// Package jsonrpc carries conductor RPCs (core/rpc) as JSON-RPC 2.0 over
// HTTP(S), on Ironic's wire: the client transport the API uses
// (HTTPTransport, net/http with keep-alive connections), the conductor's
// HTTP handler (NewHTTPHandler: envelope parsing, http_basic logins, body
// limits), the envelope and error wire format, and the reply cache that runs
// a resent call once. What a call may carry and how versions are checked is
// core/rpc's business; this package only moves rpc.Requests and their
// results.
//
// Rules:
//   - The envelope is Ironic's: the version and request id travel as the
//     reserved parameters rpc.VersionParam and rpc.ContextParam, errors as
//     a JSON-RPC error whose data.class is "rivet.exception.<class>"; only
//     prefixed classes are rebuilt as typed errors (rpc.ErrorFromWire).
//   - Untrusted bodies are bounded in size and depth and checked whole
//     (duplicate keys, UTF-8) before use; errors name the problem, never a
//     value, nor a Go type.
//   - A hand-written fast path (splitEnvelope, appendRequestBody,
//     splitResponse, encodeResult) must produce exactly what encoding/json
//     would, and says false for anything unusual; a fuzz target holds each
//     to its encoding/json reading (fast_test.go).
//   - A call that the transport resends (a kept-alive connection closed
//     before its answer) runs at most once on a conductor that knows its
//     call id (CallIDHeader, replayCache); the header is additive, so old
//     and new releases mix during an upgrade. Casts carry no call id.
//   - A call that never reached a conductor is an *rpc.UnreachableError,
//     so the router may retry it on another one; any other failure is not.
package jsonrpc
