package jsonlimit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
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
//
// The common case, a document with none of those problems, is cleared by
// one pass of jsontext's tokenizer (the JSON v2 implementation's, which by
// default refuses invalid UTF-8 and repeated names); anything it refuses
// goes through check, the token-by-token reading with encoding/json that
// gives the verdict and names the problem (FuzzCheckFastMatchesTokens).
func Check(data []byte, maxDepth int) error {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	if !utf8.Valid(data) {
		return &Error{Msg: "the body is not valid UTF-8"}
	}
	if wellFormed(data, maxDepth) {
		return nil
	}
	return check(data, maxDepth)
}

var decoders = sync.Pool{New: func() any { return new(jsontext.Decoder) }}

// wellFormed reports whether jsontext reads data as one JSON value, no
// name repeated in an object and no string invalid UTF-8, nested no
// deeper than maxDepth. false may be wrong (jsontext refuses escaped lone
// surrogates, which encoding/json accepts): check decides.
func wellFormed(data []byte, maxDepth int) bool {
	dec := decoders.Get().(*jsontext.Decoder)
	defer decoders.Put(dec)
	dec.Reset(bytes.NewBuffer(data))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return false
		}
		if k := tok.Kind(); (k == '{' || k == '[') && dec.StackDepth() > maxDepth {
			return false
		}
		if dec.StackDepth() == 0 {
			_, err := dec.ReadToken()
			return err == io.EOF
		}
	}
}

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
