package api

import (
	"net/http"
	"testing"
)

func TestV1_54Events(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.54"))
	ev := func(kv ...any) map[string]any {
		m := map[string]any{"event": "network.bind_port", "port_id": "11111111-2222-3333-4444-555555555555",
			"mac_address": "52:54:00:12:34:56", "status": "ACTIVE"}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "-" {
				delete(m, kv[i].(string))
				continue
			}
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	good := map[string]any{"events": []any{ev("device_id", "22222222-2222-3333-4444-555555555555",
		"binding:host_id", nil, "binding:vnic_type", "baremetal"), ev("event", "network.delete_port")}}
	if got := e.must(http.StatusNotFound, "POST", "/v1/events", "1.53", good).Fault(t); got != "The API is not supported for this version" {
		t.Errorf("1.53: %q", got)
	}
	r := e.must(http.StatusNoContent, "POST", "/v1/events", "1.54", good)
	if len(r.Body) != 0 {
		t.Errorf("204 with a body %q", r.Body)
	}
	e.must(http.StatusMethodNotAllowed, "GET", "/v1/events", "1.54", nil)

	bad := map[string]struct {
		body any
		want string
	}{
		"empty body":   {"", "'events' is a required property"},
		"not object":   {"[1]", "[1] is not of type 'object'"},
		"no events":    {map[string]any{}, "'events' is a required property"},
		"empty list":   {map[string]any{"events": []any{}}, "[] is too short"},
		"events dict":  {map[string]any{"events": map[string]any{}}, "{} is not of type 'array'"},
		"extra top":    {`{"events": [{"event": "network.bind_port", "port_id": "11111111-2222-3333-4444-555555555555", "mac_address": "52:54:00:12:34:56", "status": "x"}], "zz": 1, "aa": 2}`, "Additional properties are not allowed ('zz', 'aa' were unexpected)"},
		"bad event":    {map[string]any{"events": []any{ev("event", "network.other")}}, "'network.other' is not one of ['network.bind_port', 'network.unbind_port', 'network.delete_port']"},
		"bad uuid":     {map[string]any{"events": []any{ev("port_id", "abc")}}, "'abc' is not a 'uuid'"},
		"bad mac":      {map[string]any{"events": []any{ev("mac_address", "52:54:00:12:34")}}, "'52:54:00:12:34' is not a 'mac-address'"},
		"status type":  {map[string]any{"events": []any{ev("status", 5)}}, "5 is not of type 'string'"},
		"device null":  {map[string]any{"events": []any{ev("device_id", true)}}, "True is not of type 'string', 'null'"},
		"no status":    {map[string]any{"events": []any{ev("status", "-")}}, "'status' is a required property"},
		"extra in one": {map[string]any{"events": []any{ev("foo", 1)}}, "Additional properties are not allowed ('foo' was unexpected)"},
		"item type":    {map[string]any{"events": []any{"x"}}, "'x' is not of type 'object'"},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			if got := e.must(http.StatusBadRequest, "POST", "/v1/events", "1.54", tc.body).Fault(t); got != "Schema error: "+tc.want {
				t.Errorf("got %q, want %q", got, "Schema error: "+tc.want)
			}
		})
	}
}
