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
// Check's common case is one pass of jsontext's tokenizer (the maintained
// JSON v2 implementation, github.com/go-json-experiment/json), and a
// document that pass does not clear goes through encoding/json's
// token-by-token reading, which names the problem; both give the same
// verdict (FuzzCheckFastMatchesTokens). Describe words encoding/json's
// decoding errors for a client the same way, without Go types or values.
package jsonlimit
