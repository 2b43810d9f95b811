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
