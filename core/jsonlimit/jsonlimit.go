package jsonlimit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"unicode/utf8"

	"github.com/rivetmetal/rivet/core/jsonraw"
)

// DefaultMaxDepth is the nesting depth REST bodies (and the documents a
// PATCH makes of them) may reach; Ironic's own documents stay well under
// 10.
const DefaultMaxDepth = 64

// EnvelopeDepth is the most levels a JSON-RPC envelope puts above a value
// that came in a REST body: an object argument wraps a body's field in
// params, the argument and its versioned-object data (3 levels, where the
// body had 1); plain arguments add less. It has room to spare.
const EnvelopeDepth = 8

// RPCMaxDepth is the nesting depth a JSON-RPC envelope may reach: whatever
// the REST API accepted still fits once wrapped, so the depth limit is
// met (or not) at the API, where a client hears about it as a 400.
const RPCMaxDepth = DefaultMaxDepth + EnvelopeDepth

// ErrTooDeep says a document nests arrays and objects deeper than allowed.
var ErrTooDeep = errors.New("JSON nesting is too deep")

// Error is a rejected document: Msg says why, in words fit for a 400.
type Error struct {
	Msg string
	Err error // ErrTooDeep for depth, else nil
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns ErrTooDeep for a depth problem.
func (e *Error) Unwrap() error { return e.Err }

type frame struct {
	object    bool
	expectKey bool
	keys      map[string]struct{}
}

// Check reports a problem with data: not UTF-8, nested deeper than
// maxDepth (at most DefaultMaxDepth when maxDepth <= 0), a key repeated in
// one object, or not one well-formed JSON value. nil means every decoder
// will read data the same way.
func Check(data []byte, maxDepth int) error {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	if !utf8.Valid(data) {
		return &Error{Msg: "the body is not valid UTF-8"}
	}
	if jsonraw.Valid(data) && wellBehaved(data, maxDepth) {
		return nil
	}
	return check(data, maxDepth)
}

// wellBehaved reports, for a document Valid (json.Valid) accepts, that it
// nests no deeper than maxDepth and repeats no key in an object. It is the common
// case made cheap (one pass over the bytes, no tokens, no maps for small
// objects, no allocation per key for large ones): every REST body and JSON-RPC envelope goes through Check, and
// the token-by-token check cost half of what parsing an envelope cost.
// false sends the document to check, which says exactly what is wrong; so
// does a key with an escape, which only check compares decoded.
func wellBehaved(data []byte, maxDepth int) bool {
	type object struct {
		start int                 // index in keys of the object's first key
		set   map[uint64]struct{} // hashes of its keys once it has many
	}
	var (
		opens []byte   // '{' or '[' per open level
		objs  []object // per open object
		keys  [][]byte // the keys of the open objects, innermost last
	)
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '{', '[':
			if len(opens) >= maxDepth {
				return false
			}
			opens = append(opens, c)
			if c == '{' {
				objs = append(objs, object{start: len(keys)})
			}
		case '}', ']':
			if opens[len(opens)-1] == '{' {
				keys = keys[:objs[len(objs)-1].start]
				objs = objs[:len(objs)-1]
			}
			opens = opens[:len(opens)-1]
		case '"':
			j := i + 1
			escaped := false
			for ; data[j] != '"'; j++ {
				if data[j] == '\\' {
					escaped = true
					j++
				}
			}
			str := data[i+1 : j]
			i = j
			k := j + 1
			for k < len(data) && (data[k] == ' ' || data[k] == '\t' || data[k] == '\n' || data[k] == '\r') {
				k++
			}
			if k == len(data) || data[k] != ':' {
				continue // a value, not a key
			}
			if escaped {
				return false
			}
			o := &objs[len(objs)-1]
			if o.set == nil && len(keys)-o.start >= 16 {
				o.set = make(map[uint64]struct{}, 64)
				for _, k := range keys[o.start:] {
					o.set[maphash.Bytes(keySeed, k)] = struct{}{}
				}
			}
			if o.set != nil {
				// Hashes, not strings: a string per key was most of an
				// envelope's allocations. Two keys with one hash need not
				// be the same key, but false only sends the document to
				// check, which compares the keys themselves.
				h := maphash.Bytes(keySeed, str)
				if _, dup := o.set[h]; dup {
					return false
				}
				o.set[h] = struct{}{}
				continue
			}
			for _, k := range keys[o.start:] {
				if bytes.Equal(k, str) {
					return false
				}
			}
			keys = append(keys, str)
		}
	}
	return true
}

// keySeed seeds the hashes wellBehaved compares keys of large objects by.
var keySeed = maphash.MakeSeed()

// check is Check's token-by-token reading, which names the problem.
func check(data []byte, maxDepth int) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF && len(stack) > 0 {
			return &Error{Msg: "the JSON document is incomplete"}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return &Error{Msg: syntaxMessage(err)}
		}
		top := len(stack) - 1
		if top >= 0 && stack[top].object && stack[top].expectKey {
			if k, ok := tok.(string); ok {
				if _, dup := stack[top].keys[k]; dup {
					return &Error{Msg: fmt.Sprintf("duplicate key %q in an object (at byte %d)", truncate(k), dec.InputOffset())}
				}
				stack[top].keys[k] = struct{}{}
				stack[top].expectKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) >= maxDepth {
				return &Error{Msg: fmt.Sprintf("nesting deeper than %d levels (at byte %d)", maxDepth, dec.InputOffset()), Err: ErrTooDeep}
			}
			obj := tok == json.Delim('{')
			f := frame{object: obj, expectKey: obj}
			if obj {
				f.keys = map[string]struct{}{}
			}
			stack = append(stack, f)
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:top]
		}
		// A value completed: the enclosing object expects a key next.
		if n := len(stack) - 1; n >= 0 && stack[n].object {
			stack[n].expectKey = true
		}
		if len(stack) == 0 && dec.More() {
			return &Error{Msg: "unexpected data after the JSON document"}
		}
	}
	return nil
}

// syntaxMessage describes a tokenizer error without echoing the input.
func syntaxMessage(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("malformed JSON at byte %d", se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "the JSON document is incomplete"
	}
	return "malformed JSON"
}

// truncate shortens a key for a message: keys come from the client.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
