package sim

import (
	"net/http"
	"testing"
)

// TestSecureBootResource: the system links a SecureBoot resource whose
// SecureBootEnable is writable (with ETag checks) and whose
// SecureBootCurrentBoot follows the next boot: Enabled only after a UEFI
// boot with secure boot enabled. Invalid PATCHes change nothing.
func TestSecureBootResource(t *testing.T) {
	g := newRig(t, Options{})
	sb := node0 + "/SecureBoot"
	if got := str(g.get(node0).body, "SecureBoot", "@odata.id"); got != sb {
		t.Fatalf("system links SecureBoot at %q", got)
	}
	r := g.get(sb)
	if r.body["SecureBootEnable"] != false || r.body["SecureBootCurrentBoot"] != "Disabled" {
		t.Fatalf("initial: %v", r.body)
	}
	for name, body := range map[string]any{
		"type":      map[string]any{"SecureBootEnable": "yes"},
		"null":      map[string]any{"SecureBootEnable": nil},
		"read-only": map[string]any{"SecureBootCurrentBoot": "Enabled"},
		"unknown":   map[string]any{"Keys": 1},
		"empty":     map[string]any{},
	} {
		if got := g.do(http.MethodPatch, sb, admin, body); got.status != http.StatusBadRequest {
			t.Errorf("%s: %d", name, got.status)
		}
	}
	g.do(http.MethodPatch, sb, admin, map[string]any{"SecureBootEnable": true}, "If-Match", `"stale"`).want(t, http.StatusPreconditionFailed, "PreconditionFailed")
	if st := g.state("node-0"); st.SecureBootEnable {
		t.Fatal("a refused PATCH enabled secure boot")
	}
	g.do(http.MethodPatch, sb, admin, map[string]any{"SecureBootEnable": true}, "If-Match", r.header.Get("ETag")).want(t, http.StatusNoContent, "")
	if got := g.get(sb).body; got["SecureBootEnable"] != true || got["SecureBootCurrentBoot"] != "Disabled" {
		t.Fatalf("after enabling, before a boot: %v", got)
	}
	// A legacy boot is never secure; a UEFI boot is.
	g.do(http.MethodPatch, node0, admin, map[string]any{"Boot": map[string]string{"BootSourceOverrideMode": "Legacy"}}).want(t, http.StatusNoContent, "")
	g.resetTo("On").want(t, http.StatusNoContent, "")
	if st := g.state("node-0"); st.LastBootMode != "Legacy" || st.SecureBootCurrentBoot {
		t.Fatalf("after a legacy boot: mode %s, secure %v", st.LastBootMode, st.SecureBootCurrentBoot)
	}
	g.do(http.MethodPatch, node0, admin, map[string]any{"Boot": map[string]string{"BootSourceOverrideMode": "UEFI"}}).want(t, http.StatusNoContent, "")
	g.resetTo("ForceRestart").want(t, http.StatusNoContent, "")
	if got := g.get(sb).body; got["SecureBootCurrentBoot"] != "Enabled" || g.state("node-0").LastBootMode != "UEFI" {
		t.Fatalf("after a UEFI boot: %v", got)
	}
}

// TestIndicatorLEDs: the system and its chassis each have an LED shown as
// IndicatorLED and LocationIndicatorActive; either can be PATCHed, they
// are independent, and bad values are refused by name.
func TestIndicatorLEDs(t *testing.T) {
	g := newRig(t, Options{})
	chassis := "/redfish/v1/Chassis/node-0"
	for _, p := range []string{node0, chassis} {
		if b := g.get(p).body; b["IndicatorLED"] != "Off" || b["LocationIndicatorActive"] != false {
			t.Fatalf("%s initial LED: %v %v", p, b["IndicatorLED"], b["LocationIndicatorActive"])
		}
	}
	g.do(http.MethodPatch, node0, admin, map[string]any{"IndicatorLED": "Blinking"}).want(t, http.StatusNoContent, "")
	g.do(http.MethodPatch, chassis, admin, map[string]any{"LocationIndicatorActive": true}).want(t, http.StatusNoContent, "")
	st := g.state("node-0")
	if st.IndicatorLED != "Blinking" || st.ChassisIndicatorLED != "Lit" {
		t.Fatalf("LEDs: system %s, chassis %s", st.IndicatorLED, st.ChassisIndicatorLED)
	}
	if b := g.get(node0).body; b["LocationIndicatorActive"] != true {
		t.Errorf("blinking system LED: LocationIndicatorActive %v", b["LocationIndicatorActive"])
	}
	for p, body := range map[string]map[string]any{
		node0:          {"IndicatorLED": "Flashing"},
		chassis:        {"IndicatorLED": 3},
		chassis + " ":  {"LocationIndicatorActive": "on"},
		chassis + "  ": {"PowerState": "Off"},
	} {
		if got := g.do(http.MethodPatch, trim(p), admin, body); got.status != http.StatusBadRequest {
			t.Errorf("PATCH %s %v: %d", p, body, got.status)
		}
	}
	g.do(http.MethodPatch, chassis, admin, map[string]any{"IndicatorLED": "Off"}, "If-Match", `"stale"`).want(t, http.StatusPreconditionFailed, "PreconditionFailed")
	if st := g.state("node-0"); st.IndicatorLED != "Blinking" || st.ChassisIndicatorLED != "Lit" {
		t.Fatalf("a refused PATCH changed an LED: %+v", st)
	}
}

func trim(s string) string {
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}
