package api

import (
	"bytes"
	"regexp"

	"github.com/rivetmetal/rivet/core/pyrepr"
)

// nameRE is request_types.name's pattern.
var nameRE = regexp.MustCompile(`(?i)^[A-Z0-9-._~]+$`)

// allocationBodyError returns Ironic's message for a create body's first
// schema error (create_request_body; node from 1.58), or "": Ironic's
// validation middleware reports the first error jsonschema finds, in the
// schema's property order, then additional properties.
func allocationBodyError(body map[string]any, withNode bool) string {
	props := []schemaProp{
		{"candidate_nodes", nullableList(uuidOrName)},
		{"extra", optionalType("object")},
		{"name", optionalType("string")},
		{"owner", optionalType("string")},
		{"resource_class", nullableString(80)},
		{"traits", nullableList(traitName)},
		{"uuid", optionalType("string")},
	}
	if withNode {
		props = append(props, schemaProp{"node", optionalType("string")})
	}
	c := &schemaCheck{}
	c.object(0, body, props, nil)
	return c.first()
}

// uuidOrName is request_types.uuid_or_name: anyOf a UUID or a name.
func uuidOrName(c *schemaCheck, depth int, v any) {
	s, ok := v.(string)
	if ok && (uuidLike(s) || (len(s) >= 1 && len(s) <= 255 && nameRE.MatchString(s))) {
		return
	}
	cause := pyrepr.Value(v) + " is not a 'uuid'"
	if !ok {
		cause = pyrepr.Value(v) + " is not of type 'string'"
	}
	c.addWeak(depth, pyrepr.Value(v)+" is not valid under any of the given schemas", cause)
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
		return nil, pyrepr.Value(v) + " is not of type 'object'", nil
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
