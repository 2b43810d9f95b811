package inspectrules

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rivetmetal/rivet/core/pyrepr"
)

// errKey is Python's KeyError in a format: a missing key or attribute
// (is-empty treats it as an empty value).
var errKey = errors.New("KeyError")

// formatString is Python's str.format(**ctx) of s as Ironic's
// interpolate_variables uses it: each {name[key].attr…} replacement field
// is looked up in ctx (node, inventory, plugin_data, item) and rendered as
// Python's str() renders it; "{{" and "}}" are literal braces; a
// conversion (!s, !r) is honoured, a format spec refused. A field that
// does not resolve is an error (errKey when a key or attribute is missing).
func formatString(s string, ctx map[string]any) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '{' && i+1 < len(s) && s[i+1] == '{':
			b.WriteByte('{')
			i += 2
		case c == '}' && i+1 < len(s) && s[i+1] == '}':
			b.WriteByte('}')
			i += 2
		case c == '}':
			return "", fmt.Errorf("ValueError: Single '}' encountered in format string")
		case c == '{':
			depth, j := 1, i+1
			for ; j < len(s) && depth > 0; j++ {
				switch s[j] {
				case '{':
					depth++
				case '}':
					depth--
				case '[':
					// keys may hold braces; Python reads up to the next ']'
					if k := strings.IndexByte(s[j:], ']'); k > 0 {
						j += k
					}
				}
			}
			if depth > 0 {
				return "", fmt.Errorf("ValueError: expected '}' before end of string")
			}
			v, err := resolveField(s[i+1:j-1], ctx)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// resolveField renders one replacement field.
func resolveField(field string, ctx map[string]any) (string, error) {
	conv := ""
	if k := strings.LastIndex(field, "!"); k >= 0 && !strings.Contains(field[k:], "]") {
		field, conv = field[:k], field[k+1:]
	}
	if k := strings.Index(field, ":"); k >= 0 && !strings.Contains(field[:k], "[") {
		return "", fmt.Errorf("ValueError: format specifications are not supported in inspection rules")
	}
	if field == "" {
		return "", fmt.Errorf("IndexError: positional fields are not supported in inspection rules")
	}
	end := strings.IndexAny(field, ".[")
	if end < 0 {
		end = len(field)
	}
	cur, ok := ctx[field[:end]]
	if !ok {
		return "", fmt.Errorf("%w: '%s'", errKey, field[:end])
	}
	rest := field[end:]
	for rest != "" {
		var key string
		switch rest[0] {
		case '.':
			end := strings.IndexAny(rest[1:], ".[")
			if end < 0 {
				end = len(rest) - 1
			}
			key, rest = rest[1:end+1], rest[end+1:]
			m, isMap := cur.(map[string]any)
			v, found := m[key]
			if !isMap || !found {
				return "", fmt.Errorf("AttributeError: %w: no attribute '%s'", errKey, key)
			}
			cur = v
			continue
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return "", fmt.Errorf("ValueError: Missing ']' in format string")
			}
			key, rest = rest[1:end], rest[end+1:]
		default:
			return "", fmt.Errorf("ValueError: Only '.' or '[' may follow ']' in format field specifier")
		}
		idx, err := strconv.Atoi(key)
		isIndex := err == nil && key != "" && key[0] != '-' && key[0] != '+'
		switch x := cur.(type) {
		case map[string]any:
			v, found := x[key]
			if isIndex || !found {
				return "", fmt.Errorf("%w: %s", errKey, pyRepr(key))
			}
			cur = v
		case []any:
			if !isIndex {
				return "", fmt.Errorf("TypeError: list indices must be integers or slices, not str")
			}
			if idx >= len(x) {
				return "", fmt.Errorf("IndexError: list index out of range")
			}
			cur = x[idx]
		case string:
			if !isIndex {
				return "", fmt.Errorf("TypeError: string indices must be integers")
			}
			r := []rune(x)
			if idx >= len(r) {
				return "", fmt.Errorf("IndexError: string index out of range")
			}
			cur = string(r[idx])
		default:
			return "", fmt.Errorf("TypeError: '%s' object is not subscriptable", pyType(cur))
		}
	}
	switch conv {
	case "", "s":
		return PyStr(cur), nil
	case "r", "a":
		return pyRepr(cur), nil
	}
	return "", fmt.Errorf("ValueError: Unknown conversion specifier %s", conv)
}

// PyStr renders v as Python's str() does: strings as they are, None,
// True and False, integers without a point, lists and dicts as their
// repr.
func PyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

func pyRepr(v any) string { return pyrepr.Value(v) }

func pyType(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case json.Number, int, int64:
		return "int"
	case float64:
		if x := v.(float64); x == math.Trunc(x) {
			return "int"
		}
		return "float"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

// interpolate is Ironic's interpolate_variables: a string is formatted
// (one that fails stays as written, or is None for is-empty when a key
// is missing), a dict's keys and values and a list's items recursively;
// anything else is left alone. warn receives each failure.
func interpolate(v any, ctx map[string]any, op string, warn func(string)) any {
	switch x := v.(type) {
	case string:
		out, err := formatString(x, ctx)
		if err != nil {
			if errors.Is(err, errKey) && op == "is-empty" {
				return nil
			}
			warn(fmt.Sprintf("Interpolation failed: %s: %v", x, err))
			return x
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			nk, _ := interpolate(k, ctx, op, warn).(string)
			out[nk] = interpolate(e, ctx, op, warn)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = interpolate(e, ctx, op, warn)
		}
		return out
	}
	return v
}
