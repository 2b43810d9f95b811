package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/rivetmetal/rivet/core/jsonraw"
)

// viewJSON writes views (map[string]any of strings, nulls, booleans,
// links and JSON documents) as writeJSON's encoder does, byte for byte,
// without its reflection and per-map sorting machinery for the common
// values: a node's view has about 40 fields, most of them strings or null,
// and encoding it took about a seventh of a GET's API CPU. Values of other
// types (the JSON documents) go through encoding/json.
// TestViewJSONMatchesEncoder compares the two.
type viewJSON struct {
	buf  bytes.Buffer
	enc  *json.Encoder
	keys []string
}

// value appends v as JSON.
func (e *viewJSON) value(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendJSONString(b, x), nil
	case bool:
		return boolJSON(b, x), nil
	case map[string]any:
		if x != nil && len(x) == 0 {
			return append(b, "{}"...), nil
		}
		if out, ok := e.document(b, x); ok {
			return out, nil
		}
	case []link:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, l := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"href":`...)
			b = appendJSONString(b, l.Href)
			b = append(b, `,"rel":`...)
			b = appendJSONString(b, l.Rel)
			if l.Type != "" {
				b = append(b, `,"type":`...)
				b = appendJSONString(b, l.Type)
			}
			b = append(b, '}')
		}
		return append(b, ']'), nil
	}
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.buf)
		e.enc.SetEscapeHTML(false)
	}
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))...), nil
}

// document appends a JSON document decoded by the database layer or the
// request (maps, lists, strings, json.Number, booleans, nulls) as
// encoding/json writes it; ok is false, and b is as it was, when the
// document holds any other type (floats among them), which value then
// leaves to encoding/json whole. A node's driver_info, properties,
// instance_info and extra went through encoding/json's reflective map
// encoder, a tenth of a GET's allocations.
func (e *viewJSON) document(b []byte, v any) (out []byte, ok bool) {
	start := len(b)
	if b, ok = e.appendDocument(b, v, 0); !ok {
		return b[:start], false
	}
	return b, true
}

// maxDocumentDepth bounds appendDocument's recursion; deeper documents
// (which request bodies cannot carry, see jsonlimit) go to encoding/json.
const maxDocumentDepth = 64

func (e *viewJSON) appendDocument(b []byte, v any, depth int) ([]byte, bool) {
	if depth > maxDocumentDepth {
		return b, false
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendJSONString(b, x), true
	case bool:
		return boolJSON(b, x), true
	case json.Number:
		if !validJSONNumber(string(x)) {
			return b, false
		}
		return append(b, x...), true
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, item := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = e.appendDocument(b, item, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if x == nil {
			return append(b, "null"...), true
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			var ok bool
			if b, ok = e.appendDocument(b, x[k], depth+1); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}

// validJSONNumber reports whether s is a JSON number, which is what
// encoding/json requires of a json.Number it writes: a JSON value that
// starts with a sign or a digit and ends with a digit can only be one.
func validJSONNumber(s string) bool {
	digit := func(c byte) bool { return '0' <= c && c <= '9' }
	if s == "" || !(s[0] == '-' || digit(s[0])) || !digit(s[len(s)-1]) {
		return false
	}
	return jsonraw.Valid([]byte(s))
}

// view appends a view: its keys in encoding/json's order (sorted).
func (e *viewJSON) view(b []byte, view map[string]any) ([]byte, error) {
	if view == nil {
		return append(b, "null"...), nil
	}
	e.keys = sortedKeys(e.keys, view)
	b = append(b, '{')
	var err error
	for i, k := range e.keys { // value never calls view: e.keys stays
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		if b, err = e.value(b, view[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// recentKeySets are the last sorted key sets of large views, shared
// read-only: the views of one kind at one microversion have the same keys,
// so sorting them again for every node (a few µs for a node's ~40 fields,
// a thousand times for a page of them) is mostly avoidable.
var (
	recentKeySets    [4]atomic.Pointer[[]string]
	recentKeySetNext atomic.Uint32
)

// minSharedKeySet is the size from which a view's key set is looked up
// among and added to recentKeySets.
const minSharedKeySet = 8

// sortedKeys returns view's keys sorted: last when it holds exactly them
// (a collection's items), else a recent set of the same keys, else a new
// slice. The slice returned must not be written to.
func sortedKeys(last []string, view map[string]any) []string {
	if sameKeys(last, view) {
		return last
	}
	large := len(view) >= minSharedKeySet
	if large {
		for i := range recentKeySets {
			if p := recentKeySets[i].Load(); p != nil && sameKeys(*p, view) {
				return *p
			}
		}
	}
	keys := make([]string, 0, len(view)) // never last's memory: it may be shared
	for k := range view {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if large {
		recentKeySets[recentKeySetNext.Add(1)%uint32(len(recentKeySets))].Store(&keys)
	}
	return keys
}

// sameKeys reports whether keys are exactly view's keys.
func sameKeys(keys []string, view map[string]any) bool {
	if len(keys) != len(view) || len(keys) == 0 {
		return false
	}
	for _, k := range keys {
		if _, ok := view[k]; !ok {
			return false
		}
	}
	return true
}

// writeView is writeJSON for a view.
//
// The body goes out in one Write with its Content-Length: without it,
// net/http sends a body larger than its 2 KiB response buffer (a node at
// the latest microversion is about 2.5 KiB) in chunked encoding.
func writeView(w http.ResponseWriter, status int, view map[string]any) {
	var e viewJSON
	b, err := e.view(make([]byte, 0, 4096), view)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if err == nil {
		b = append(b, '\n')
		h.Set("Content-Length", strconv.Itoa(len(b)))
	}
	w.WriteHeader(status)
	if err != nil {
		return // writeJSON's encoder writes nothing when encoding fails
	}
	_, _ = w.Write(b)
}

// collection appends {"<name>": items, "next"?: next} as writeCollection
// builds it, keys sorted.
func (e *viewJSON) collection(b []byte, name string, items []map[string]any, next string) ([]byte, error) {
	b = append(b, '{')
	if next != "" && "next" < name {
		b = append(b, `"next":`...)
		b = appendJSONString(b, next)
		b = append(b, ',')
	}
	b = appendJSONString(b, name)
	b = append(b, ":["...)
	var err error
	for i, item := range items {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = e.view(b, item); err != nil {
			return b, err
		}
	}
	b = append(b, ']')
	if next != "" && name < "next" {
		b = append(b, `,"next":`...)
		b = appendJSONString(b, next)
	}
	return append(b, '}'), nil
}
