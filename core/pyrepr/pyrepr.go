// Package pyrepr renders values as Python's repr() prints them. Ironic's
// messages quote the values they complain about that way (jsonschema's
// "5 is not of type 'string'", the conductor's "clean step {'interface':
// 'deploy', …}"), and clients and admins match on those texts, so Rivet
// writes the same.
//
// Values come from decoded JSON. A json.Number is printed as Python's
// json.loads would have decoded its text (an int as written, anything
// with a fraction or an exponent as a float: 1e2 is 100.0). A float64
// from encoding/json's default decoding has lost that distinction; an
// integral one is printed as an int, as the JSON integers it almost
// always came from are. Map keys are sorted: Python keeps a dict's
// insertion order, which a Go map does not have.
package pyrepr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// String renders s as Python's repr of a str: single quotes unless s holds
// one and no double quote; backslash, the quote and the characters Python
// does not print (controls, format characters, separators but the space,
// private use, unassigned: Go's unicode.IsPrint is the same rule) escaped.
func String(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	const hex = "0123456789abcdef"
	b := make([]byte, 0, len(s)+2)
	b = append(b, q)
	for _, r := range s {
		switch {
		case r == '\\':
			b = append(b, `\\`...)
		case r == rune(q):
			b = append(b, '\\', q)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\t':
			b = append(b, `\t`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r < 0x100 && !unicode.IsPrint(r): // control characters, NBSP
			b = append(b, '\\', 'x', hex[r>>4], hex[r&15])
		case !unicode.IsPrint(r): // format, separators, private use, unassigned
			if r < 0x10000 {
				b = fmt.Appendf(b, `\u%04x`, r)
			} else {
				b = fmt.Appendf(b, `\U%08x`, r)
			}
		default:
			b = append(b, string(r)...)
		}
	}
	return string(append(b, q))
}

// Number renders a JSON number's text as Python prints what json.loads
// makes of it: an integer as an int (-0 is 0), anything else as a float
// (1e2 is 100.0, 1.50 is 1.5, 1e400 is inf). Text that is not a number
// is returned as it is.
func Number(text string) string {
	if !strings.ContainsAny(text, ".eE") {
		if isDigits(strings.TrimPrefix(text, "-")) && strings.Trim(text, "-0") == "" {
			return "0" // Python's int has no negative zero
		}
		return text
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !math.IsInf(f, 0) {
		return text
	}
	return Float(f)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Float renders f as Python's repr of a float: the shortest digits that
// read back as f, in positional notation with at least one fractional
// digit (100.0, 0.0001) unless the decimal exponent is below -4 or above
// 16, then in scientific notation with a signed exponent of at least two
// digits (1e-05, 1e+16); nan, inf and -inf for the others.
func Float(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	sign := ""
	if math.Signbit(f) {
		sign, f = "-", -f
	}
	// Shortest round-trip digits d.ddd and exponent, as Python's repr
	// (David Gay's mode 0) chooses them.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	decpt := x + 1 // digits are 0.ddd × 10^decpt
	if decpt <= -4 || decpt > 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if x < 0 {
			es, x = "-", -x
		}
		return fmt.Sprintf("%s%se%s%02d", sign, m, es, x)
	}
	switch {
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	case decpt < len(digits):
		return sign + digits[:decpt] + "." + digits[decpt:]
	default:
		return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
	}
}

// Value renders a decoded JSON value (or a Go scalar) as Python's repr:
// None, True and False, quoted strings, numbers, [lists] and {dicts}.
func Value(v any) string {
	var b strings.Builder
	write(&b, v)
	return b.String()
}

func write(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case string:
		b.WriteString(String(x))
	case json.Number:
		b.WriteString(Number(x.String()))
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e16 {
			b.WriteString(strconv.FormatInt(int64(x), 10))
		} else {
			b.WriteString(Float(x))
		}
	case float32:
		write(b, float64(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			write(b, e)
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(String(e))
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(String(k))
			b.WriteString(": ")
			write(b, x[k])
		}
		b.WriteByte('}')
	default:
		fmt.Fprint(b, v)
	}
}

// JSON renders a JSON document as Python's repr of what json.loads makes
// of it; text that is not one JSON value is returned as it is, trimmed.
func JSON(text []byte) string {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return string(bytes.TrimSpace(text))
	}
	return Value(v)
}
