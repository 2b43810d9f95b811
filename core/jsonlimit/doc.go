// Package jsonlimit checks an untrusted JSON document before it is decoded:
// its nesting depth is bounded, every string is valid UTF-8, and no object
// repeats a key (encoding/json would silently keep the last, so two readers
// of one body could disagree about it).
//
// Rules: Check walks the document with encoding/json's streaming tokenizer,
// which does not recurse, so a hostile document costs time linear in its
// size and memory linear in its depth. Errors describe the problem and its
// position (a byte offset), never a value, which may be a secret.
//
// It also holds what the fast paths of the JSON-RPC envelope and of object
// primitives share (members.go, valid.go): json.Valid's verdict in less
// time, splitting an object Check or Valid accepted into its members,
// reading a string without escapes, telling whether json.Marshal copies a
// raw value as it is. Each says false for
// anything unusual, and its caller then lets encoding/json decide.
package jsonlimit
