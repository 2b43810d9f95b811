package redact

import "github.com/rivetmetal/rivet/plugins/secretkey"

// Masked replaces a whole secret value, as Ironic's API does.
const Masked = "******"

// Hidden replaces the secret part of a text: a URL's user name and
// password, a secret key=value pair's value (oslo's mask_password "***").
const Hidden = "***"

// Dict returns a copy of m in which every value under a secret key is
// Masked and every string is masked as Text, at every depth (oslo's
// mask_dict_password, with a secret key's nested object masked whole). It
// returns nil for nil; m itself is never changed.
func Dict(m map[string]any) map[string]any {
	if m == nil {
		return nil
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
// as Text. Other values (numbers, booleans, nil) are returned as they are.
func Value(v any) any {
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
