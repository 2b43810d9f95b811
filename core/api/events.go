package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/rivetmetal/rivet/core/pyrepr"
	"github.com/rivetmetal/rivet/core/version"
)

// v1_54 adds POST /v1/events (Ironic's MINOR_54_EVENTS).
var v1_54 = version.Version{Major: 1, Minor: 54}

// eventTypes are the external events Ironic accepts (network events from
// Neutron), in its schema's order.
var eventTypes = []string{"network.bind_port", "network.unbind_port", "network.delete_port"}

// eventProps are an event's properties in the schema's order; jsonschema
// reports the first failing one in that order.
var eventProps = []string{"event", "port_id", "mac_address", "status", "device_id", "binding:host_id", "binding:vnic_type"}

// postEvents serves POST /v1/events (1.54): the body is validated exactly
// as Ironic's schema does and each event is logged; Ironic does nothing
// more with them (its EventsController only logs), and neither does Rivet.
func (s *server) postEvents(w http.ResponseWriter, r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_54) {
		return errorf(http.StatusNotFound, msgVersionNotSupported)
	}
	data, err := readBody(r)
	if err != nil {
		return err
	}
	var body any = map[string]any{} // an empty body is {}, as Ironic's method.body
	if len(bytes.TrimSpace(data)) > 0 {
		if err := decodeJSON(data, &body); err != nil {
			return err
		}
	}
	if msg := eventsSchemaError(body, data); msg != "" {
		return errorf(http.StatusBadRequest, "Schema error: %s", msg)
	}
	for _, e := range body.(map[string]any)["events"].([]any) {
		s.Logger.DebugContext(r.Context(), "received external event", "request_id", RequestIDFrom(r.Context()), "event", e)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// eventsSchemaError returns jsonschema's message for the first violation
// of Ironic's events schema, or "" when the body conforms.
func eventsSchemaError(body any, raw []byte) string {
	top, ok := body.(map[string]any)
	if !ok {
		return pyrepr.Value(body) + " is not of type 'object'"
	}
	if evs, present := top["events"]; present {
		list, ok := evs.([]any)
		if !ok {
			return pyrepr.Value(evs) + " is not of type 'array'"
		}
		if len(list) == 0 {
			return "[] is too short"
		}
		for _, e := range list {
			if msg := eventSchemaError(e); msg != "" {
				return msg
			}
		}
	} else {
		return "'events' is a required property"
	}
	return additionalProps(raw, top, []string{"events"})
}

// eventSchemaError checks one event against the schema's item.
func eventSchemaError(e any) string {
	ev, ok := e.(map[string]any)
	if !ok {
		return pyrepr.Value(e) + " is not of type 'object'"
	}
	for _, p := range eventProps {
		v, present := ev[p]
		if !present {
			continue
		}
		str, isStr := v.(string)
		switch p {
		case "event":
			if !isStr {
				return pyrepr.Value(v) + " is not of type 'string'"
			}
			if !slices.Contains(eventTypes, str) {
				return pyrepr.Value(v) + " is not one of " + pyrepr.Value(anyList(eventTypes))
			}
		case "port_id", "device_id", "binding:host_id":
			if !isStr && (p == "port_id" || v != nil) {
				want := "'string'"
				if p != "port_id" {
					want = "'string', 'null'"
				}
				return pyrepr.Value(v) + " is not of type " + want
			}
			if isStr && !uuidLike(str) {
				return pyrepr.Value(v) + " is not a 'uuid'"
			}
		case "mac_address":
			if !isStr {
				return pyrepr.Value(v) + " is not of type 'string'"
			}
			if !macRE.MatchString(str) {
				return pyrepr.Value(v) + " is not a 'mac-address'"
			}
		case "status":
			if !isStr {
				return pyrepr.Value(v) + " is not of type 'string'"
			}
		case "binding:vnic_type":
			if !isStr && v != nil {
				return pyrepr.Value(v) + " is not of type 'string', 'null'"
			}
		}
	}
	for _, req := range []string{"event", "port_id", "mac_address", "status"} {
		if _, ok := ev[req]; !ok {
			return pyrepr.Value(req) + " is a required property"
		}
	}
	var extra []string
	for k := range ev {
		if !slices.Contains(eventProps, k) {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra) // the document's order is not kept
	return unexpected(extra)
}

// additionalProps is jsonschema's additionalProperties message for the
// keys of obj outside allowed, in the order raw (the body) has them.
func additionalProps(raw []byte, obj map[string]any, allowed []string) string {
	var extra []string
	for _, k := range keyOrder(raw) {
		if _, ok := obj[k]; ok && !slices.Contains(allowed, k) && !slices.Contains(extra, k) {
			extra = append(extra, k)
		}
	}
	return unexpected(extra)
}

func unexpected(extra []string) string {
	switch len(extra) {
	case 0:
		return ""
	case 1:
		return "Additional properties are not allowed (" + pyrepr.Value(extra[0]) + " was unexpected)"
	}
	quoted := make([]string, len(extra))
	for i, k := range extra {
		quoted[i] = pyrepr.Value(k)
	}
	return "Additional properties are not allowed (" + strings.Join(quoted, ", ") + " were unexpected)"
}

// keyOrder lists the top-level keys of a JSON object in document order.
func keyOrder(raw []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		keys = append(keys, fmt.Sprint(t))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

// uuidLike is oslo's is_uuid_like: hex digits that Python's uuid.UUID
// takes, with or without hyphens, braces or a "urn:uuid:" prefix.
func uuidLike(s string) bool {
	t := strings.ToLower(s)
	t = strings.TrimPrefix(strings.TrimPrefix(t, "urn:"), "uuid:")
	t = strings.Trim(t, "{}")
	t = strings.ReplaceAll(t, "-", "")
	if len(t) != 32 {
		return false
	}
	_, err := strconv.ParseUint(t[:16], 16, 64)
	_, err2 := strconv.ParseUint(t[16:], 16, 64)
	return err == nil && err2 == nil
}

func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
