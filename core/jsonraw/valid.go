package jsonraw

import "encoding/json"

// validMaxDepth is how deep scan follows a document before it leaves the
// verdict to encoding/json (whose own limit is 10,000 levels).
const validMaxDepth = 512

// Valid reports whether data is one well-formed JSON value, exactly as
// json.Valid does, in a fraction of its time: encoding/json's scanner
// calls a function per byte, and the fast paths of the JSON-RPC envelope
// and of object primitives validate every body they split. A document
// nested deeper than validMaxDepth is left to json.Valid.
func Valid(data []byte) bool {
	ok, deep := scan(data, false)
	if deep {
		return json.Valid(data)
	}
	return ok
}

// scan reports whether data is one well-formed JSON value (as json.Valid:
// any byte from 0x20 up inside strings, UTF-8 or not), surrounded by
// whitespace unless verbatim. With verbatim it also refuses what json.Marshal
// of a json.RawMessage would rewrite: whitespace outside strings and '<',
// '>', '&', U+2028, U+2029 anywhere. deep means it stopped at
// validMaxDepth without a verdict.
func scan(data []byte, verbatim bool) (ok, deep bool) {
	var stackBuf [32]byte
	stack := stackBuf[:0] // '{' or '[' per open level
	n := len(data)
	i := 0
	for {
		// A value starts at i (after whitespace).
		if i, ok = skipWS(data, i, verbatim); !ok || i >= n {
			return false, false
		}
		switch c := data[i]; {
		case c == '{' || c == '[':
			if len(stack) >= validMaxDepth {
				return false, true
			}
			i++
			if i, ok = skipWS(data, i, verbatim); !ok || i >= n {
				return false, false
			}
			if data[i] == c+2 { // '}' or ']': empty
				i++
				break
			}
			stack = append(stack, c)
			if c == '{' {
				if i, ok = scanKey(data, i, verbatim); !ok {
					return false, false
				}
			}
			continue
		case c == '"':
			if i, ok = scanString(data, i, verbatim); !ok {
				return false, false
			}
		case c == '-' || c >= '0' && c <= '9':
			if i, ok = scanNumber(data, i); !ok {
				return false, false
			}
		case c == 't' && hasAt(data, i, "true"):
			i += 4
		case c == 'f' && hasAt(data, i, "false"):
			i += 5
		case c == 'n' && hasAt(data, i, "null"):
			i += 4
		default:
			return false, false
		}
		// A value ended at i: close what it ends, or go on to the next.
		for {
			if i, ok = skipWS(data, i, verbatim); !ok {
				return false, false
			}
			if len(stack) == 0 {
				return i == n, false
			}
			if i >= n {
				return false, false
			}
			top := stack[len(stack)-1]
			if data[i] == top+2 {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if data[i] != ',' {
				return false, false
			}
			i++
			if top == '{' {
				if i, ok = scanKey(data, i, verbatim); !ok {
					return false, false
				}
			}
			break
		}
	}
}

// skipWS skips JSON whitespace from i; with verbatim there must be none.
func skipWS(data []byte, i int, verbatim bool) (int, bool) {
	j := i
	for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\n' || data[j] == '\r') {
		j++
	}
	return j, !verbatim || j == i
}

// scanKey scans `"key":` from i (whitespace allowed around it unless
// verbatim) and returns the index after the colon.
func scanKey(data []byte, i int, verbatim bool) (int, bool) {
	var ok bool
	if i, ok = skipWS(data, i, verbatim); !ok || i >= len(data) || data[i] != '"' {
		return i, false
	}
	if i, ok = scanString(data, i, verbatim); !ok {
		return i, false
	}
	if i, ok = skipWS(data, i, verbatim); !ok || i >= len(data) || data[i] != ':' {
		return i, false
	}
	return i + 1, true
}

// scanString scans the string literal at data[i] and returns the index
// after its closing quote.
func scanString(data []byte, i int, verbatim bool) (int, bool) {
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return j, false
		case c == '\\':
			j++
			if j >= len(data) {
				return j, false
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(data) || !isHex(data[j+1]) || !isHex(data[j+2]) || !isHex(data[j+3]) || !isHex(data[j+4]) {
					return j, false
				}
				j += 4
			default:
				return j, false
			}
		case verbatim && (c == '<' || c == '>' || c == '&'):
			return j, false
		case verbatim && c == 0xe2 && j+2 < len(data) && data[j+1] == 0x80 && (data[j+2] == 0xa8 || data[j+2] == 0xa9):
			return j, false
		}
	}
	return len(data), false
}

// scanNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at
// data[i] and returns the index after it; what may follow is for the
// caller to judge. data is a document's bytes or, for Canonical, its
// text.
func scanNumber[T ~string | ~[]byte](data T, i int) (int, bool) {
	n := len(data)
	if data[i] == '-' {
		i++
	}
	switch {
	case i < n && data[i] == '0':
		i++
	case i < n && data[i] >= '1' && data[i] <= '9':
		i = digits(data, i)
	default:
		return i, false
	}
	if i < n && data[i] == '.' {
		j := digits(data, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < n && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < n && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(data, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func digits[T ~string | ~[]byte](data T, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hasAt(data []byte, i int, lit string) bool {
	return len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit
}
