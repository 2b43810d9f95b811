package jsonraw

import "unicode/utf8"

// canonicalMaxDepth bounds Canonical's recursion; deeper documents are
// "cannot tell".
const canonicalMaxDepth = 64

// Canonical reports whether doc, a JSON object, is exactly what
// json.Marshal writes for the map[string]any that encoding/json (with
// UseNumber) decodes it into, so that a view may copy it instead of
// decoding and encoding it again: no whitespace, each object's keys in
// ascending byte order without repeats (json.Marshal sorts a map's keys),
// strings without escapes, control characters, '<', '>', '&', U+2028,
// U+2029 or invalid UTF-8 (all of which encoding/json rewrites), numbers
// as JSON writes them (a json.Number is copied), nesting under 64 levels.
// visit, when not nil, sees every key and every string value (without
// quotes; key tells which) and may answer false to stop: Canonical is
// then false. False means "cannot tell": decode doc with encoding/json.
// FuzzCanonical holds it to encoding/json.
func Canonical(doc string, visit func(s string, key bool) bool) bool {
	if len(doc) == 0 || doc[0] != '{' {
		return false
	}
	c := canonicalScanner{doc: doc, visit: visit}
	end, ok := c.value(0, 0)
	return ok && end == len(doc)
}

type canonicalScanner struct {
	doc   string
	visit func(s string, key bool) bool
}

// value checks the value at i and returns the index after it.
func (c *canonicalScanner) value(i, depth int) (int, bool) {
	d := c.doc
	if i >= len(d) || depth > canonicalMaxDepth {
		return i, false
	}
	switch ch := d[i]; {
	case ch == '{':
		i++
		if i < len(d) && d[i] == '}' {
			return i + 1, true
		}
		prev, first := "", true
		for {
			start := i
			end, ok := c.str(i, true)
			if !ok {
				return end, false
			}
			key := d[start+1 : end-1]
			if !first && key <= prev {
				return end, false
			}
			prev, first = key, false
			if end >= len(d) || d[end] != ':' {
				return end, false
			}
			if i, ok = c.value(end+1, depth+1); !ok || i >= len(d) {
				return i, false
			}
			switch d[i] {
			case ',':
				i++
			case '}':
				return i + 1, true
			default:
				return i, false
			}
		}
	case ch == '[':
		i++
		if i < len(d) && d[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = c.value(i, depth+1); !ok || i >= len(d) {
				return i, false
			}
			switch d[i] {
			case ',':
				i++
			case ']':
				return i + 1, true
			default:
				return i, false
			}
		}
	case ch == '"':
		return c.str(i, false)
	case ch == '-' || ch >= '0' && ch <= '9':
		return scanNumber(d, i)
	case ch == 't' && len(d)-i >= 4 && d[i:i+4] == "true":
		return i + 4, true
	case ch == 'f' && len(d)-i >= 5 && d[i:i+5] == "false":
		return i + 5, true
	case ch == 'n' && len(d)-i >= 4 && d[i:i+4] == "null":
		return i + 4, true
	}
	return i, false
}

// str checks the string literal at i and returns the index after it.
func (c *canonicalScanner) str(i int, key bool) (int, bool) {
	d := c.doc
	if i >= len(d) || d[i] != '"' {
		return i, false
	}
	ascii := true
	for j := i + 1; j < len(d); j++ {
		switch ch := d[j]; {
		case ch == '"':
			s := d[i+1 : j]
			if !ascii && !utf8.ValidString(s) {
				return j, false
			}
			if c.visit != nil && !c.visit(s, key) {
				return j, false
			}
			return j + 1, true
		case ch < 0x20 || ch == '\\' || ch == '<' || ch == '>' || ch == '&':
			return j, false
		case ch == 0xe2 && j+2 < len(d) && d[j+1] == 0x80 && (d[j+2] == 0xa8 || d[j+2] == 0xa9):
			return j, false
		case ch >= utf8.RuneSelf:
			ascii = false
		}
	}
	return len(d), false
}
