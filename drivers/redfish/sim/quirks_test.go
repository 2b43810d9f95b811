package sim

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestParseQuirks covers rivet-sim's --quirks spellings and refusals.
func TestParseQuirks(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    Quirks
		wantErr string
	}{
		"none": {in: ""},
		"every": {in: "no-sessions, power-delay=2s,boot-continuous,no-media-actions,missing=Memory,missing=Storage,session-limit-409",
			want: Quirks{NoSessionService: true, PowerDelay: 2 * time.Second, BootAlwaysContinuous: true, NoMediaActions: true,
				MissingCollections: []string{"Memory", "Storage"}, SessionLimitConflict: true}},
		"unknown":            {in: "slow", wantErr: `unknown quirk "slow"`},
		"bad delay":          {in: "power-delay=soon", wantErr: "power-delay"},
		"negative delay":     {in: "power-delay=-1s", wantErr: "power-delay"},
		"unknown collection": {in: "missing=Bios", wantErr: `missing="Bios"`},
		"value on a flag":    {in: "no-sessions=1", wantErr: "unknown quirk"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseQuirks(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseQuirks(%q) = %v, want an error containing %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("quirks (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := New(Options{Quirks: Quirks{MissingCollections: []string{"Bios"}}}); err == nil {
		t.Error("New accepted an unknown missing collection")
	}
}

// TestQuirks checks each quirk on the wire, as a client sees it.
func TestQuirks(t *testing.T) {
	sys := "/redfish/v1/Systems/node-0"
	t.Run("no session service", func(t *testing.T) {
		g := newRig(t, Options{Quirks: Quirks{NoSessionService: true}})
		root := g.do("GET", "/redfish/v1/", auth{}, nil)
		if _, ok := root.body["SessionService"]; ok || len(root.body["Links"].(map[string]any)) != 0 {
			t.Errorf("service root still links sessions: %s", root.raw)
		}
		if r := g.do("POST", "/redfish/v1/SessionService/Sessions", auth{}, map[string]any{"UserName": DefaultUsername, "Password": DefaultPassword}); r.status != http.StatusNotFound {
			t.Errorf("login: %d, want 404", r.status)
		}
		if r := g.do("GET", sys, admin, nil); r.status != http.StatusOK {
			t.Errorf("basic auth: %d", r.status)
		}
	})
	t.Run("power delay", func(t *testing.T) {
		clk := newClock()
		g := newRig(t, Options{Now: clk.Now, Quirks: Quirks{PowerDelay: 5 * time.Second}})
		for _, rt := range []string{"On", "ForceOff", "On"} {
			if r := g.do("POST", sys+"/Actions/ComputerSystem.Reset", admin, map[string]any{"ResetType": rt}); r.status != http.StatusNoContent {
				t.Fatalf("reset %s: %d %s", rt, r.status, r.raw)
			}
			clk.Add(time.Second)
		}
		steps := []struct {
			after time.Duration
			want  string
		}{{0, "Off"}, {2 * time.Second, "On"}, {time.Second, "Off"}, {time.Second, "On"}}
		for i, s := range steps {
			clk.Add(s.after)
			if got := g.do("GET", sys, admin, nil).body["PowerState"]; got != s.want {
				t.Errorf("step %d: PowerState %v, want %s (queued resets apply in order, each 5s late)", i, got, s.want)
			}
		}
	})
	t.Run("boot always continuous", func(t *testing.T) {
		g := newRig(t, Options{Quirks: Quirks{BootAlwaysContinuous: true}})
		g.do("PATCH", sys, admin, map[string]any{"Boot": map[string]any{"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once"}})
		boot := g.do("GET", sys, admin, nil).body["Boot"].(map[string]any)
		if boot["BootSourceOverrideEnabled"] != "Continuous" {
			t.Errorf("after Once: %v, want Continuous", boot["BootSourceOverrideEnabled"])
		}
	})
	t.Run("no media actions", func(t *testing.T) {
		g := newRig(t, Options{Quirks: Quirks{NoMediaActions: true}})
		cd := "/redfish/v1/Managers/BMC-node-0/VirtualMedia/Cd"
		if _, ok := g.do("GET", cd, admin, nil).body["Actions"]; ok {
			t.Error("virtual media still advertises actions")
		}
		if r := g.do("POST", cd+"/Actions/VirtualMedia.InsertMedia", admin, map[string]any{"Image": "http://x/a.iso"}); r.status != http.StatusNotFound {
			t.Errorf("InsertMedia: %d, want 404", r.status)
		}
		if r := g.do("PATCH", cd, admin, map[string]any{"Image": "http://x/a.iso", "Inserted": true}); r.status != http.StatusNoContent {
			t.Errorf("PATCH: %d %s", r.status, r.raw)
		}
	})
	t.Run("missing collection", func(t *testing.T) {
		g := newRig(t, Options{Quirks: Quirks{MissingCollections: []string{"Memory"}}})
		if _, ok := g.do("GET", sys, admin, nil).body["Memory"]; !ok {
			t.Error("the System no longer links Memory")
		}
		for _, p := range []string{sys + "/Memory", sys + "/Memory/DIMM1"} {
			if r := g.do("GET", p, admin, nil); r.status != http.StatusNotFound {
				t.Errorf("GET %s: %d, want 404", p, r.status)
			}
		}
		if r := g.do("GET", sys+"/Processors", admin, nil); r.status != http.StatusOK {
			t.Errorf("Processors: %d", r.status)
		}
	})
	t.Run("session limit 409", func(t *testing.T) {
		g := newRig(t, Options{SessionLimit: 1, Quirks: Quirks{SessionLimitConflict: true}})
		login := map[string]any{"UserName": DefaultUsername, "Password": DefaultPassword}
		if r := g.do("POST", "/redfish/v1/SessionService/Sessions", auth{}, login); r.status != http.StatusCreated {
			t.Fatalf("first login: %d", r.status)
		}
		r := g.do("POST", "/redfish/v1/SessionService/Sessions", auth{}, login)
		if r.status != http.StatusConflict || !strings.Contains(string(r.raw), "SessionLimitExceeded") {
			t.Errorf("login beyond the limit: %d %s, want 409 SessionLimitExceeded", r.status, r.raw)
		}
	})
}
