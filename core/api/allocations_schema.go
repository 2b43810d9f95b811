package api

import (
	"bytes"
	"regexp"
	"unicode/utf8"
)

// The allocation create body's schema (Ironic's create_request_body; node
// from 1.58), checked in its property order with jsonschema's messages.

var (
	nameRE        = regexp.MustCompile(`(?i)^[A-Z0-9-._~]+$`)
	customTraitRE = regexp.MustCompile(`^CUSTOM_[A-Z0-9_]+$`)
	// stdTraitRE is the shape of os-traits' standard names. Ironic checks
	// the exact list; Rivet, without it, takes any name of that shape.
	stdTraitRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
)

// allocationBodyError returns the first schema violation of a create
// body (decoded into body, raw its bytes), or "".
func allocationBodyError(body map[string]any, raw []byte, withNode bool) string {
	props := []string{"candidate_nodes", "extra", "name", "owner", "resource_class", "traits", "uuid"}
	if withNode {
		props = append(props, "node")
	}
	for _, p := range props {
		v, ok := body[p]
		if !ok {
			continue
		}
		if msg := allocationPropError(p, v); msg != "" {
			return msg
		}
	}
	return additionalProps(raw, body, props)
}

func allocationPropError(p string, v any) string {
	switch p {
	case "candidate_nodes", "traits":
		list, ok := v.([]any)
		if v == nil {
			return ""
		}
		if !ok {
			return pyValue(v) + " is not of type 'array', 'null'"
		}
		for _, item := range list {
			var msg string
			if p == "traits" {
				msg = traitError(item)
			} else {
				msg = uuidOrNameError(item)
			}
			if msg != "" {
				return msg
			}
		}
	case "extra":
		if _, ok := v.(map[string]any); !ok && v != nil {
			return pyValue(v) + " is not of type 'object', 'null'"
		}
	default: // name, owner, resource_class, uuid, node
		str, ok := v.(string)
		if !ok && v != nil {
			return pyValue(v) + " is not of type 'string', 'null'"
		}
		if p == "resource_class" && ok && utf8.RuneCountInString(str) > 80 {
			return pyValue(v) + " is too long"
		}
	}
	return ""
}

// uuidOrNameError is request_types.uuid_or_name: anyOf a UUID or a name.
func uuidOrNameError(v any) string {
	s, ok := v.(string)
	if ok && (uuidLike(s) || (len(s) >= 1 && len(s) <= 255 && nameRE.MatchString(s))) {
		return ""
	}
	cause := pyValue(v) + " is not a 'uuid'"
	if !ok {
		cause = pyValue(v) + " is not of type 'string'"
	}
	return pyValue(v) + " is not valid under any of the given schemas. Possible root cause: " + cause
}

// traitError is response_types.traits: a string of 1 to 255 characters,
// a custom trait or a standard one.
func traitError(v any) string {
	s, ok := v.(string)
	switch {
	case !ok:
		return pyValue(v) + " is not of type 'string'"
	case s == "":
		return "'' should be non-empty"
	case utf8.RuneCountInString(s) > 255:
		return pyValue(v) + " is too long"
	case customTraitRE.MatchString(s) || stdTraitRE.MatchString(s):
		return ""
	}
	return pyValue(v) + " is not valid under any of the given schemas. Possible root cause: " +
		pyValue(v) + " does not match '^CUSTOM_[A-Z0-9_]+$'"
}

// decodeAllocationBody decodes a POST body into a generic object (an
// empty body is {}, as Ironic's method.body).
func decodeAllocationBody(data []byte) (map[string]any, string, error) {
	var v any = map[string]any{}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := decodeJSON(data, &v); err != nil {
			return nil, "", err
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, pyValue(v) + " is not of type 'object'", nil
	}
	return m, "", nil
}

// strList converts a validated JSON list of strings.
func strList(v any) []string {
	list, _ := v.([]any)
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, x := range list {
		out[i], _ = x.(string)
	}
	return out
}

// optStr converts a validated string-or-null.
func optStr(v any) *string {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	return &s
}
