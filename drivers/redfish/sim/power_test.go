package sim

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const node0 = "/redfish/v1/Systems/node-0"

func (g *rig) resetTo(rt string, headers ...string) resp {
	g.t.Helper()
	return g.do(http.MethodPost, node0+"/Actions/ComputerSystem.Reset", admin, map[string]string{"ResetType": rt}, headers...)
}

func (g *rig) state(id string) State {
	g.t.Helper()
	st, err := g.sim.System(id)
	if err != nil {
		g.t.Fatal(err)
	}
	return st
}

func TestResetTransitions(t *testing.T) {
	tests := map[string]struct {
		startOn   bool
		reset     string
		wantPower string
		wantBoots int // boots caused by the reset
	}{
		"on from off":              {false, "On", PowerOn, 1},
		"on when on is a no-op":    {true, "On", PowerOn, 0},
		"force off":                {true, "ForceOff", PowerOff, 0},
		"force off when off":       {false, "ForceOff", PowerOff, 0},
		"graceful shutdown":        {true, "GracefulShutdown", PowerOff, 0},
		"graceful restart reboots": {true, "GracefulRestart", PowerOn, 1},
		"force restart from off":   {false, "ForceRestart", PowerOn, 1},
		"button turns off":         {true, "PushPowerButton", PowerOff, 0},
		"button turns on":          {false, "PushPowerButton", PowerOn, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := newRig(t, Options{})
			if err := g.sim.SetPower("node-0", tc.startOn); err != nil {
				t.Fatal(err)
			}
			before := g.state("node-0")
			g.resetTo(tc.reset).want(t, http.StatusNoContent, "")
			st := g.state("node-0")
			if st.PowerState != tc.wantPower || st.Resets != 1 || st.Boots-before.Boots != tc.wantBoots {
				t.Errorf("after %s: power %s resets %d boots +%d; want %s, 1, +%d",
					tc.reset, st.PowerState, st.Resets, st.Boots-before.Boots, tc.wantPower, tc.wantBoots)
			}
			if got := str(g.get(node0).body, "PowerState"); got != tc.wantPower {
				t.Errorf("resource PowerState %s, want %s", got, tc.wantPower)
			}
		})
	}
}

func TestPowerSettle(t *testing.T) {
	clock := newClock()
	g := newRig(t, Options{PowerSettle: 10 * time.Second, Now: clock.Now})
	g.resetTo("On").want(t, http.StatusNoContent, "")
	steps := []struct {
		after     time.Duration
		wantPower string
		wantBoots int
	}{
		{0, PowerPoweringOn, 0},
		{9 * time.Second, PowerPoweringOn, 0},
		{time.Second, PowerOn, 1},
	}
	var etags []string
	for _, s := range steps {
		clock.Add(s.after)
		r := g.get(node0)
		etags = append(etags, str(r.body, "@odata.etag"))
		if got, st := str(r.body, "PowerState"), g.state("node-0"); got != s.wantPower || st.Boots != s.wantBoots {
			t.Errorf("+%v: PowerState %s boots %d, want %s %d", s.after, got, st.Boots, s.wantPower, s.wantBoots)
		}
	}
	if etags[1] != etags[0] || etags[2] == etags[1] {
		t.Errorf("ETags %v: want unchanged while powering on, changed once settled", etags)
	}
	if got := str(g.get("/redfish/v1/Chassis/node-0").body, "PowerState"); got != PowerOn {
		t.Errorf("chassis PowerState %s", got)
	}
	g.resetTo("ForceOff").want(t, http.StatusNoContent, "")
	if got := g.state("node-0").PowerState; got != PowerPoweringOff {
		t.Errorf("right after ForceOff: %s", got)
	}
	clock.Add(10 * time.Second)
	if got := g.state("node-0").PowerState; got != PowerOff {
		t.Errorf("settled after ForceOff: %s", got)
	}
}

func TestNMI(t *testing.T) {
	clock := newClock()
	g := newRig(t, Options{PowerSettle: time.Second, Now: clock.Now})
	g.resetTo("Nmi").want(t, http.StatusConflict, "ResourceInStandby")
	g.resetTo("On").want(t, http.StatusNoContent, "")
	g.resetTo("Nmi").want(t, http.StatusConflict, "ResourceInStandby") // still PoweringOn
	clock.Add(time.Second)
	g.resetTo("Nmi").want(t, http.StatusNoContent, "")
	g.resetTo("Nmi").want(t, http.StatusNoContent, "")
	if st := g.state("node-0"); st.NMIs != 2 || st.Resets != 1 || st.PowerState != PowerOn {
		t.Errorf("after two NMIs: %+v", st)
	}
}

func TestResetValidation(t *testing.T) {
	g := newRig(t, Options{})
	tests := map[string]struct {
		body any
		id   string
	}{
		"not allowed":   {map[string]string{"ResetType": "PowerCycle"}, "ActionParameterNotSupported"},
		"missing":       {map[string]string{}, "ActionParameterMissing"},
		"unknown param": {map[string]any{"ResetType": "On", "Delay": 1}, "ActionParameterUnknown"},
		"wrong type":    {map[string]any{"ResetType": 1}, "ActionParameterValueFormatError"},
		"malformed":     {"[1,2]", "MalformedJSON"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g.do(http.MethodPost, node0+"/Actions/ComputerSystem.Reset", admin, tc.body).want(t, http.StatusBadRequest, tc.id)
		})
	}
	if st := g.state("node-0"); st.Resets != 0 || st.PowerState != PowerOff {
		t.Errorf("a rejected reset changed the system: %+v", st)
	}
}

func TestBootOverridePatch(t *testing.T) {
	tests := map[string]struct {
		body     any
		status   int
		id       string
		mention  string // the error must name this property
		wantBoot BootOverride
	}{
		"pxe once uefi": {map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Once", "BootSourceOverrideMode": "UEFI"}},
			204, "", "", BootOverride{"Pxe", "Once", "UEFI"}},
		"target only keeps the rest": {map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Cd"}},
			204, "", "", BootOverride{"Cd", "Disabled", "UEFI"}},
		"bad target": {map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Floppy", "BootSourceOverrideEnabled": "Once"}},
			400, "PropertyValueNotInList", "Boot/BootSourceOverrideTarget", BootOverride{"None", "Disabled", "UEFI"}},
		"bad enabled": {map[string]any{"Boot": map[string]string{"BootSourceOverrideEnabled": "Sometimes"}},
			400, "PropertyValueNotInList", "Boot/BootSourceOverrideEnabled", BootOverride{"None", "Disabled", "UEFI"}},
		"bad mode type": {map[string]any{"Boot": map[string]any{"BootSourceOverrideMode": 2}},
			400, "PropertyValueTypeError", "Boot/BootSourceOverrideMode", BootOverride{"None", "Disabled", "UEFI"}},
		"unknown boot property": {map[string]any{"Boot": map[string]any{"BootOrder": []string{"a"}}},
			400, "PropertyUnknown", "Boot/BootOrder", BootOverride{"None", "Disabled", "UEFI"}},
		"read-only property": {map[string]any{"PowerState": "On"},
			400, "PropertyNotWritable", "PowerState", BootOverride{"None", "Disabled", "UEFI"}},
		"unknown property": {map[string]any{"Colour": "red"},
			400, "PropertyUnknown", "Colour", BootOverride{"None", "Disabled", "UEFI"}},
		"empty": {map[string]any{}, 400, "EmptyJSON", "", BootOverride{"None", "Disabled", "UEFI"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := newRig(t, Options{})
			r := g.do(http.MethodPatch, node0, admin, tc.body)
			r.want(t, tc.status, tc.id)
			if tc.mention != "" && !containsString(r.body, tc.mention) {
				t.Errorf("error does not name %s: %s", tc.mention, r.raw)
			}
			if diff := cmp.Diff(tc.wantBoot, g.state("node-0").Boot); diff != "" {
				t.Errorf("boot (-want +got):\n%s", diff)
			}
		})
	}
}

// containsString reports whether any string anywhere in v contains sub.
func containsString(v any, sub string) bool {
	switch x := v.(type) {
	case string:
		return strings.Contains(x, sub)
	case map[string]any:
		for _, vv := range x {
			if containsString(vv, sub) {
				return true
			}
		}
	case []any:
		for _, vv := range x {
			if containsString(vv, sub) {
				return true
			}
		}
	}
	return false
}
