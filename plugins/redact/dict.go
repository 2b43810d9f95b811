package redact

import "github.com/rivetmetal/rivet/plugins/secretkey"

// Masked replaces a whole secret value, as Ironic's API does.
const Masked = "******"

// Hidden replaces the secret part of a text: a URL's user name and
// password, a secret key=value pair's value (oslo's mask_password "***").
const Hidden = "***"

// Dict returns m with every value under a secret key Masked and every
// string masked as Text, at every depth (oslo's mask_dict_password, with a
// secret key's nested object masked whole). m itself is never changed: the
// result is a copy, or m itself when nothing in it needs masking (the
// common document: no allocation), so callers must not change it. nil
// gives nil.
func Dict(m map[string]any) map[string]any {
	if !dirtyDict(m) {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if secretkey.Is(k) {
			out[k] = Masked
			continue
		}
		out[k] = Value(v)
	}
	return out
}

// Value returns v masked: objects as Dict, the elements of lists, strings
// as Text. Other values (numbers, booleans, nil) are returned as they are;
// so is a list with nothing to mask (as Dict, callers must not change the
// result).
func Value(v any) any {
	if !dirty(v) {
		return v
	}
	switch t := v.(type) {
	case string:
		return Text(t)
	case map[string]any:
		return Dict(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = Value(e)
		}
		return out
	case []string:
		out := make([]string, len(t))
		for i, e := range t {
			out[i] = Text(e)
		}
		return out
	}
	return v
}

// dirtyDict reports whether Dict would change anything in m.
func dirtyDict(m map[string]any) bool {
	for k, v := range m {
		if secretkey.Is(k) || dirty(v) {
			return true
		}
	}
	return false
}

// dirty reports whether Value would change anything in v.
func dirty(v any) bool {
	switch t := v.(type) {
	case string:
		return Text(t) != t
	case map[string]any:
		return dirtyDict(t)
	case []any:
		for _, e := range t {
			if dirty(e) {
				return true
			}
		}
	case []string:
		for _, e := range t {
			if Text(e) != e {
				return true
			}
		}
	}
	return false
}
