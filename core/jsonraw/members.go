package jsonraw

import "unicode/utf8"

// Helpers for fast paths that take apart a document already known to be
// well-formed (jsonlimit.Check returned nil, or Valid returned true) without
// decoding it with encoding/json: splitting an object into its members,
// reading a string without escapes, and telling whether json.Marshal would
// copy a raw value unchanged. Each answers "I cannot tell" (false) for
// anything unusual, so its caller falls back to encoding/json and gets
// exactly encoding/json's result.

// Member is one member of a JSON object as it is written: Key is the key's
// string literal with its quotes (escapes not decoded: see Unquote) and
// Value the value's bytes without the whitespace around them. Both are
// sub-slices of the document, capped so appending to one cannot overwrite
// the document.
type Member struct {
	Key, Value []byte
}

// Members appends to dst the members of the object that valid holds, in
// document order, repeated keys included. valid must be one well-formed
// JSON document (leading and trailing whitespace allowed): Members does not
// check it, it only splits it. ok is false when the document is not an
// object, or when it turns out not to be well-formed after all (Members
// never panics, but it does not promise to notice).
func Members(dst []Member, valid []byte) ([]Member, bool) {
	i := skipSpace(valid, 0)
	if i >= len(valid) || valid[i] != '{' {
		return dst, false
	}
	i = skipSpace(valid, i+1)
	if i < len(valid) && valid[i] == '}' {
		return dst, skipSpace(valid, i+1) == len(valid)
	}
	for {
		if i >= len(valid) || valid[i] != '"' {
			return dst, false
		}
		kEnd := skipValue(valid, i)
		if kEnd < 0 {
			return dst, false
		}
		key := valid[i:kEnd:kEnd]
		i = skipSpace(valid, kEnd)
		if i >= len(valid) || valid[i] != ':' {
			return dst, false
		}
		i = skipSpace(valid, i+1)
		vEnd := skipValue(valid, i)
		if vEnd < 0 {
			return dst, false
		}
		dst = append(dst, Member{Key: key, Value: valid[i:vEnd:vEnd]})
		i = skipSpace(valid, vEnd)
		if i >= len(valid) {
			return dst, false
		}
		switch valid[i] {
		case ',':
			i = skipSpace(valid, i+1)
		case '}':
			return dst, skipSpace(valid, i+1) == len(valid)
		default:
			return dst, false
		}
	}
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the index just past the value that starts at data[i],
// or -1 when none does. Strings, arrays and objects are delimited by their
// brackets and quotes alone; anything else (a number or a literal) runs up
// to the next delimiter. It is a splitter for valid JSON, not a validator.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		for j := i + 1; j < len(data); j++ {
			switch data[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			case '"':
				if j = skipValue(data, j); j < 0 {
					return -1
				}
				j-- // the loop's j++ steps past the closing quote
			}
		}
		return -1
	case ',', ':', '}', ']':
		return -1
	}
	j := i
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}

// Unquote returns the string a JSON string literal holds when it is plain:
// no escape, valid UTF-8, no control character. ok is false otherwise
// (including for anything but a string literal), for the caller to let
// encoding/json decode it: for a plain literal encoding/json gives exactly
// the bytes between the quotes, but it replaces invalid UTF-8 (which
// json.Valid accepts) and decodes escapes.
func Unquote(lit []byte) (s string, ok bool) {
	n := len(lit)
	if n < 2 || lit[0] != '"' || lit[n-1] != '"' {
		return "", false
	}
	body := lit[1 : n-1]
	ascii := true
	for _, c := range body {
		switch {
		case c < 0x20 || c == '"' || c == '\\':
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	if !ascii && !utf8.Valid(body) {
		return "", false
	}
	return string(body), true
}

// MarshalsVerbatim reports whether json.Marshal writes the raw value v
// (as a json.RawMessage) exactly as it is: v is valid JSON, has no
// insignificant whitespace outside strings and no byte encoding/json
// rewrites when it compacts a raw value with HTML escaping ('<', '>', '&',
// and the UTF-8 of U+2028 and U+2029). false means json.Marshal may
// change v or refuse it (and it is what a document nested deeper than
// validMaxDepth gets, unread).
func MarshalsVerbatim(v []byte) bool {
	ok, _ := scan(v, true) // too deep: false, json.Marshal will tell
	return ok
}

// AppendPlainString appends s as json.Marshal writes it when that is s
// between quotes (printable ASCII without '"', '\\', '<', '>', '&'), and
// reports false otherwise, leaving the caller to use json.Marshal.
func AppendPlainString(buf []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return buf, false
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"'), true
}
