package sim

import (
	"net/http"
	"testing"
	"time"
)

func TestETags(t *testing.T) {
	g := newRig(t, Options{})
	first := g.get(node0)
	etag := str(first.body, "@odata.etag")
	if etag == "" || first.header.Get("ETag") != etag {
		t.Fatalf("ETag header %q, body %q", first.header.Get("ETag"), etag)
	}
	pxe := map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Pxe"}}
	g.do(http.MethodPatch, node0, admin, pxe, "If-Match", etag).want(t, http.StatusNoContent, "")
	// The PATCH changed the system, so the same ETag is now stale, for PATCH and actions alike.
	g.do(http.MethodPatch, node0, admin, pxe, "If-Match", etag).want(t, http.StatusPreconditionFailed, "PreconditionFailed")
	g.resetTo("On", "If-Match", etag).want(t, http.StatusPreconditionFailed, "PreconditionFailed")
	// The precondition is judged before the body, as HTTP orders it.
	g.do(http.MethodPatch, node0, admin, map[string]any{"Colour": 1}, "If-Match", etag).
		want(t, http.StatusPreconditionFailed, "PreconditionFailed")
	g.resetTo("Sideways", "If-Match", etag).want(t, http.StatusPreconditionFailed, "PreconditionFailed")
	if st := g.state("node-0"); st.Resets != 0 {
		t.Errorf("a reset with a stale ETag went through")
	}
	fresh := str(g.get(node0).body, "@odata.etag")
	if fresh == etag {
		t.Fatalf("ETag did not change after a PATCH: %s", fresh)
	}
	g.resetTo("On", "If-Match", `"other", `+fresh).want(t, http.StatusNoContent, "")
	g.resetTo("ForceOff", "If-Match", "*").want(t, http.StatusNoContent, "")
	if st := g.state("node-0"); st.Resets != 2 {
		t.Errorf("resets %d, want 2", st.Resets)
	}
}

func TestBootRecordsWhatItBootedFrom(t *testing.T) {
	const iso = "http://images.example/deploy.iso"
	clock := newClock()
	g := newRig(t, Options{PowerSettle: 5 * time.Second, Now: clock.Now})
	g.do(http.MethodPatch, node0, admin, map[string]any{"Boot": map[string]string{
		"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": "Once"}}).want(t, http.StatusNoContent, "")
	g.resetTo("On").want(t, http.StatusNoContent, "")
	// Media inserted while the system is still powering on is what it boots.
	g.insert(cdPath, map[string]any{"Image": iso}).want(t, http.StatusNoContent, "")
	clock.Add(5 * time.Second)
	st := g.state("node-0")
	if st.LastBootSource != "Cd" || st.LastBootImage != iso || st.Boot.Enabled != "Disabled" || st.Boots != 1 {
		t.Fatalf("after a Cd Once boot: %+v", st)
	}
	// Once is used up: the next reboot is from disk, and the image is not claimed.
	g.resetTo("ForceRestart").want(t, http.StatusNoContent, "")
	clock.Add(5 * time.Second)
	if st := g.state("node-0"); st.LastBootSource != "Hdd" || st.LastBootImage != "" || st.Boots != 2 {
		t.Fatalf("after the second boot: %+v", st)
	}
	// Continuous stays; Pxe boots record no image.
	g.do(http.MethodPatch, node0, admin, map[string]any{"Boot": map[string]string{
		"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideEnabled": "Continuous"}}).want(t, http.StatusNoContent, "")
	for range 2 {
		g.resetTo("ForceRestart").want(t, http.StatusNoContent, "")
		clock.Add(5 * time.Second)
	}
	if st := g.state("node-0"); st.LastBootSource != "Pxe" || st.LastBootImage != "" || st.Boot.Enabled != "Continuous" || st.Boots != 4 {
		t.Fatalf("after Continuous Pxe boots: %+v", st)
	}
	// Powered off before the settle time ends: no boot happens at all.
	g.resetTo("ForceRestart").want(t, http.StatusNoContent, "")
	g.resetTo("ForceOff").want(t, http.StatusNoContent, "")
	clock.Add(5 * time.Second)
	if st := g.state("node-0"); st.Boots != 4 || st.PowerState != PowerOff {
		t.Fatalf("a cut-short power-on booted: %+v", st)
	}
}

func TestSetPowerOutOfBand(t *testing.T) {
	g := newRig(t, Options{Systems: 2, PowerSettle: time.Hour})
	if err := g.sim.SetPower("node-1", true); err != nil {
		t.Fatal(err)
	}
	if st := g.state("node-1"); st.PowerState != PowerOn || st.Boots != 1 || st.Resets != 0 {
		t.Errorf("out-of-band power on (no settle, a boot, no reset): %+v", st)
	}
	if st := g.state("node-0"); st.PowerState != PowerOff {
		t.Errorf("the other system changed: %+v", st)
	}
	if err := g.sim.SetPower("node-9", true); err != ErrUnknownSystem {
		t.Errorf("unknown system: %v", err)
	}
	if _, err := g.sim.System("sys-0"); err != ErrUnknownSystem {
		t.Errorf("unknown system: %v", err)
	}
}
