// Package jsonraw reads and writes raw JSON bytes without encoding/json,
// for the fast paths of the JSON-RPC envelope (core/rpc/jsonrpc), of object
// primitives (core/objects) and of views (core/api), which measurably lower
// the API's and the conductor's CPU per enrolled node and per GET
// (docs/performance.md): Valid is json.Valid's
// verdict in less time; Members splits an object already known to be
// well-formed into its raw members; Unquote
// reads a string literal without escapes; MarshalsVerbatim and
// AppendPlainString tell when json.Marshal would copy a raw value or a
// string as it is.
//
// Rules: this package exists for speed only, never for a limit (those are
// core/jsonlimit's). Each helper agrees with encoding/json byte for byte on
// whatever it accepts, and answers false ("I cannot tell") for anything
// unusual, so its caller falls back to encoding/json and gets exactly its
// result; FuzzMembers holds every helper to encoding/json, on any input.
package jsonraw
