package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/states"
)

// TestBootModeTransitioning: in every transient provision state (Ironic's
// UNSTABLE_STATES) setting the boot mode or secure boot is 409 Conflict
// and nothing reaches the conductor; in a stable state it is passed on.
func TestBootModeTransitioning(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.93"))
	id := e.node(nil)
	for _, st := range states.AllStates {
		n, err := e.store.GetNode(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		n.ProvisionState = string(st)
		if err := e.store.Save(t.Context(), n); err != nil {
			t.Fatal(err)
		}
		before := len(e.cond.calls)
		for path, body := range map[string]any{"boot_mode": map[string]any{"target": "uefi"}, "secure_boot": map[string]any{"target": false}} {
			if states.IsStable(st) {
				// The fake conductor answers as a driver without them.
				e.must(http.StatusBadRequest, "PUT", "/v1/nodes/"+id+"/states/"+path, "1.76", body)
				continue
			}
			r := e.must(http.StatusConflict, "PUT", "/v1/nodes/"+id+"/states/"+path, "1.76", body)
			if got := r.Fault(t); !strings.Contains(got, "Node is in "+string(st)+" state. Since node is transitioning") {
				t.Errorf("%s in %s: %q", path, st, got)
			}
		}
		if !states.IsStable(st) && len(e.cond.calls) != before {
			t.Errorf("%s: a call reached the conductor: %v", st, e.cond.calls[before:])
		}
	}
	if !slices.Contains(e.cond.calls, "boot_mode") || !slices.Contains(e.cond.calls, "secure_boot") {
		t.Errorf("stable states never reached the conductor: %v", e.cond.calls)
	}
}

// TestManagement2Policies: the endpoints follow Ironic's default policies:
// setting the boot mode needs a project member (owner or lessee), setting
// an indicator an owner member, reading indicators a project reader. A
// request the policy lets through reaches the (fake) conductor, whose
// answer is 400 for a driver without them.
func TestManagement2Policies(t *testing.T) {
	e := newRBACEnv(t, true)
	for _, tc := range []struct {
		user, method, path string
		body               any
		code               int
		policy             string
	}{
		{"p1reader", "PUT", "/states/boot_mode", map[string]any{"target": "uefi"}, 403, "baremetal:node:set_boot_mode"},
		{"p2member", "PUT", "/states/boot_mode", map[string]any{"target": "uefi"}, 400, ""},
		{"p1reader", "PUT", "/states/secure_boot", map[string]any{"target": true}, 403, "baremetal:node:set_secure_boot"},
		{"p2member", "PUT", "/management/indicators/led@system", map[string]any{"state": "ON"}, 403, "baremetal:node:set_indicator_state"},
		{"p1member", "PUT", "/management/indicators/led@system", map[string]any{"state": "ON"}, 400, ""},
		{"p1reader", "GET", "/management/indicators", nil, 400, ""},
		{"p2member", "GET", "/management/indicators", nil, 400, ""},
		{"p3member", "GET", "/management/indicators", nil, 404, ""},
	} {
		r := e.doAs(tc.user, tc.method, "/v1/nodes/"+e.a+tc.path, "1.76", tc.body)
		if r.Code != tc.code {
			t.Errorf("%s %s %s: %d, want %d: %s", tc.user, tc.method, tc.path, r.Code, tc.code, r.Body)
			continue
		}
		if tc.policy != "" {
			if got, want := r.Fault(t), "Access was denied to the following resource: "+tc.policy; got != want {
				t.Errorf("%s %s %s: %q, want %q", tc.user, tc.method, tc.path, got, want)
			}
		}
	}
}
