// Package leakcheck tells whether a message meant for a client shows Go
// or decoder internals (type names, struct fields, encoding/json's own
// wording), for the tests and fuzz targets of every error path that words
// a decoding error: such text tells a client nothing it can act on and
// tells an attacker what the server is written in.
package leakcheck

import "strings"

// internals are substrings no client-facing message may hold.
var internals = []string{
	"json:", "json.", "Go struct", "Go value", "[]map", "map[string]", "RawMessage", "interface {}",
	"struct {", "unmarshal", "reflect", "*errors.", "runtime error",
}

// GoInternals returns the first internal s shows, or "".
func GoInternals(s string) string { return GoInternalsBeyond(s, "") }

// GoInternalsBeyond is GoInternals ignoring what the client sent itself
// (input), which a message may quote: a member called "json.x" is named
// in "unknown member \"json.x\"" without the server showing anything.
func GoInternalsBeyond(s, input string) string {
	for _, x := range internals {
		if strings.Contains(s, x) && !strings.Contains(input, x) {
			return x
		}
	}
	return ""
}
