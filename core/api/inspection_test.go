package api

import (
	"net/http"
	"testing"

	"github.com/rivetmetal/rivet/core/states"
)

// inspectWaitNode creates a node in inspect wait with the given BMC
// addresses cached for lookup and a port per MAC.
func inspectWaitNode(e *env, bmcs []any, macs ...string) string {
	e.t.Helper()
	id := e.node(nil)
	for _, mac := range macs {
		e.must(http.StatusCreated, "POST", "/v1/ports", "latest", map[string]any{"node_uuid": id, "address": mac})
	}
	n, err := e.store.GetNode(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	n.ProvisionState = string(states.InspectWait)
	n.DriverInternalInfo = map[string]any{"lookup_bmc_addresses": bmcs}
	if err := e.store.Save(e.t.Context(), n); err != nil {
		e.t.Fatal(err)
	}
	return id
}

func inspectionBody(bmc any, macs ...string) map[string]any {
	var ifaces []any
	for i, m := range macs {
		ifaces = append(ifaces, map[string]any{"name": "eth" + string(rune('0'+i)), "mac_address": m})
	}
	return map[string]any{"inventory": map[string]any{"interfaces": ifaces, "bmc_address": bmc}, "extra_data": 1}
}

// TestContinueInspectionLookup: Ironic's lookup_node over MACs and cached
// BMC addresses; every failure is the same 404 and reaches no conductor.
func TestContinueInspectionLookup(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.84"))
	a := inspectWaitNode(e, []any{"192.0.2.10"}, "52:54:00:00:0a:01")
	b := inspectWaitNode(e, []any{"192.0.2.20"}, "52:54:00:00:0b:01")
	inspectWaitNode(e, []any{"192.0.2.99"}) // two nodes behind one BMC address
	inspectWaitNode(e, []any{"192.0.2.99"})
	cases := []struct {
		name  string
		query string
		body  map[string]any
		want  int
		node  string
	}{
		{"by MAC", "", inspectionBody(nil, "52:54:00:00:0a:01", "52:54:00:99:99:99"), 202, a},
		{"by BMC only", "", inspectionBody("192.0.2.20", "52:54:00:99:99:98"), 202, b},
		{"MAC and matching BMC", "", inspectionBody("192.0.2.10", "52:54:00:00:0a:01"), 202, a},
		{"MAC of one node, BMC of another", "", inspectionBody("192.0.2.20", "52:54:00:00:0a:01"), 404, ""},
		{"MACs of two nodes", "", inspectionBody(nil, "52:54:00:00:0a:01", "52:54:00:00:0b:01"), 404, ""},
		{"BMC shared by two nodes", "", inspectionBody("192.0.2.99", "52:54:00:99:99:97"), 404, ""},
		{"node_uuid and its MAC", "?node_uuid=" + a, inspectionBody(nil, "52:54:00:00:0a:01"), 202, a},
		{"node_uuid of another node", "?node_uuid=" + b, inspectionBody(nil, "52:54:00:00:0a:01"), 404, ""},
		{"nothing matches", "", inspectionBody(nil, "52:54:00:99:99:96"), 404, ""},
		{"no lookup data", "", map[string]any{"inventory": map[string]any{"interfaces": []any{map[string]any{"mac_address": "bogus"}}}}, 400, ""},
		{"bmc_address not a string", "", inspectionBody(7, "52:54:00:00:0a:01"), 400, ""},
		{"no inventory", "", map[string]any{"interfaces": []any{}}, 400, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := e.withT(t)
			// Each case starts from inspect wait (the fake conductor moves it on).
			for _, id := range []string{a, b} {
				n, _ := e.store.GetNode(t.Context(), id)
				n.ProvisionState = string(states.InspectWait)
				_ = e.store.Save(t.Context(), n)
			}
			before := len(e.cond.calls)
			r := e.must(c.want, "POST", "/v1/continue_inspection"+c.query, "1.84", c.body)
			if c.want != 202 {
				if c.want == 404 && r.Fault(t) != "Resource could not be found." {
					t.Errorf("404 says %q", r.Fault(t))
				}
				if len(e.cond.calls) != before {
					t.Errorf("a refused POST reached the conductor: %v", e.cond.calls[before:])
				}
				return
			}
			got := r.JSON(t)
			if node, _ := got["node"].(map[string]any); node["uuid"] != c.node {
				t.Errorf("answer names %v, want %s", got["node"], c.node)
			}
		})
	}
	e.must(http.StatusNotFound, "POST", "/v1/continue_inspection", "1.83", inspectionBody(nil, "52:54:00:00:0a:01"))
	if got := e.must(http.StatusNotFound, "POST", "/v1/continue_inspection?node_uuid="+a, "1.1", inspectionBody(nil, "52:54:00:00:0a:01")).Fault(t); got != "API version 1.84 or newer is required" {
		t.Errorf("node_uuid at 1.1: %q", got)
	}
	e.must(http.StatusBadRequest, "POST", "/v1/continue_inspection?node_uuid=nope", "1.84", inspectionBody(nil, "52:54:00:00:0a:01"))
}

// TestV1_39InspectingNotPatchable: from 1.39 a node in "inspecting" cannot
// be patched (409 with Ironic's words); below it can, for compatibility;
// "inspect wait" shows as "inspecting" below 1.39, in lists too.
func TestV1_39InspectingNotPatchable(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.84"))
	id := e.node(nil)
	n, err := e.store.GetNode(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	target := string(states.Manageable)
	n.ProvisionState, n.TargetProvisionState = string(states.Inspecting), &target
	if err := e.store.Save(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	patch := []map[string]any{{"op": "add", "path": "/extra/k", "value": "v"}}
	got := e.must(http.StatusConflict, "PATCH", "/v1/nodes/"+id, "1.39", patch).Fault(t)
	if want := `Cannot update node "` + id + `" while it is in state "inspecting".`; got != want {
		t.Errorf("409 says %q, want %q", got, want)
	}
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "1.38", patch)

	n, _ = e.store.GetNode(t.Context(), id)
	n.ProvisionState = string(states.InspectWait)
	if err := e.store.Save(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "1.39", patch) // inspect wait may be patched
	for ver, want := range map[string]string{"1.38": "inspecting", "1.39": "inspect wait"} {
		if got := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, ver, nil).JSON(t)["provision_state"]; got != want {
			t.Errorf("GET @%s: provision_state %v, want %s", ver, got, want)
		}
		list := e.must(http.StatusOK, "GET", "/v1/nodes", ver, nil).JSON(t)["nodes"].([]any)
		if got := list[0].(map[string]any)["provision_state"]; got != want {
			t.Errorf("list @%s: provision_state %v, want %s", ver, got, want)
		}
	}
}
