package redfish_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
)

// TestPower drives power through on, off, off again and a reboot from off,
// with and without a settle delay, and checks after each step that the
// simulator has arrived (not merely started: the driver waits) and that a
// no-op sends no Reset.
func TestPower(t *testing.T) {
	steps := []struct {
		do         string
		want       string // the simulator's PowerState right after
		wantResets int    // cumulative
	}{
		{"on", sim.PowerOn, 1},
		{"off", sim.PowerOff, 2},
		{"off", sim.PowerOff, 2}, // already off: nothing sent
		{"reboot", sim.PowerOn, 3},
		{"reboot", sim.PowerOn, 4},
	}
	for name, settle := range map[string]time.Duration{"instant": 0, "settling": 80 * time.Millisecond} {
		t.Run(name, func(t *testing.T) {
			b := startSim(t, sim.Options{PowerSettle: settle})
			d := newDriver(t, testOptions())
			n := node(b, "node-0")
			for i, st := range steps {
				var err error
				switch st.do {
				case "on":
					err = d.SetPowerState(ctx(t), n, plugins.PowerOn)
				case "off":
					err = d.SetPowerState(ctx(t), n, plugins.PowerOff)
				case "reboot":
					err = d.Reboot(ctx(t), n)
				}
				must(t, st.do, err)
				got := b.state(t, "node-0")
				if got.PowerState != st.want || got.Resets != st.wantResets {
					t.Fatalf("step %d %s: power %s resets %d, want %s %d", i, st.do, got.PowerState, got.Resets, st.want, st.wantResets)
				}
				ps, err := d.GetPowerState(ctx(t), n)
				must(t, "get power state", err)
				if want := map[string]plugins.PowerState{sim.PowerOn: plugins.PowerOn, sim.PowerOff: plugins.PowerOff}[st.want]; ps != want {
					t.Errorf("step %d: GetPowerState %q, want %q", i, ps, want)
				}
			}
		})
	}
}

// TestPowerTransitionReadsAsTarget: while settling, PoweringOn reads as
// power on, as Ironic maps it.
func TestPowerTransitionReadsAsTarget(t *testing.T) {
	b := startSim(t, sim.Options{PowerSettle: time.Hour})
	d := newDriver(t, testOptions())
	b.raw(t, "POST", "/redfish/v1/Systems/node-0/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"}, nil)
	if st := b.state(t, "node-0"); st.PowerState != sim.PowerPoweringOn {
		t.Fatalf("simulator reads %s, want PoweringOn", st.PowerState)
	}
	ps, err := d.GetPowerState(ctx(t), node(b, "node-0"))
	must(t, "get power state", err)
	if ps != plugins.PowerOn {
		t.Errorf("PoweringOn read as %q, want %q", ps, plugins.PowerOn)
	}
}

// TestPowerStateChangeTimeout: a node that never arrives fails the call
// after redfish_power_state_change_timeout, retryably, saying why.
func TestPowerStateChangeTimeout(t *testing.T) {
	b := startSim(t, sim.Options{PowerSettle: time.Hour})
	d := newDriver(t, testOptions())
	err := d.SetPowerState(ctx(t), node(b, "node-0", redfish.KeyPowerStateChangeTimeout, 0.2), plugins.PowerOn)
	noSecret(t, err)
	e := asError(t, err)
	if !plugins.IsRetryable(err) || e.Op != "set power state" || e.BMC != b.URL {
		t.Errorf("error %v: retryable %v op %q bmc %q", err, plugins.IsRetryable(err), e.Op, e.BMC)
	}
}

// TestSoftPower uses GracefulShutdown/GracefulRestart only when the system
// advertises them, and never substitutes a hard action.
func TestSoftPower(t *testing.T) {
	tests := map[string]struct {
		strip   bool // remove Graceful* from the allowable values
		wantErr error
	}{
		"advertised":     {false, nil},
		"not advertised": {true, plugins.ErrNotSupported},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b := startSim(t, sim.Options{}, func(b *bmcSim) {
				if tc.strip {
					b.rewrite = stripResetTypes("GracefulShutdown", "GracefulRestart")
				}
			})
			if err := b.SetPower("node-0", true); err != nil {
				t.Fatal(err)
			}
			d := newDriver(t, testOptions())
			n := node(b, "node-0")
			for _, op := range []func() error{
				func() error { return d.SoftReboot(ctx(t), n, 0) },
				func() error { return d.SoftPowerOff(ctx(t), n, 5*time.Second) },
			} {
				err := op()
				noSecret(t, err)
				if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
					t.Fatalf("got %v, want %v", err, tc.wantErr)
				}
			}
			st := b.state(t, "node-0")
			wantPower, wantResets := sim.PowerOff, 2
			if tc.strip {
				wantPower, wantResets = sim.PowerOn, 0
			}
			if st.PowerState != wantPower || st.Resets != wantResets {
				t.Errorf("power %s resets %d, want %s %d", st.PowerState, st.Resets, wantPower, wantResets)
			}
		})
	}
}

// stripResetTypes removes reset types from every system's advertised
// ResetType@Redfish.AllowableValues.
func stripResetTypes(types ...string) func(string, map[string]any) {
	return func(_ string, body map[string]any) {
		actions, _ := body["Actions"].(map[string]any)
		reset, _ := actions["#ComputerSystem.Reset"].(map[string]any)
		vals, ok := reset["ResetType@Redfish.AllowableValues"].([]any)
		if !ok {
			return
		}
		reset["ResetType@Redfish.AllowableValues"] = slices.DeleteFunc(vals, func(v any) bool {
			s, _ := v.(string)
			return slices.Contains(types, s)
		})
	}
}

// TestPowerActionTimeout: the action's timeout replaces the node's
// power_state_change_timeout for the wait, both ways: a longer one lets a
// slow system arrive, a shorter one fails the action, retryably, saying
// which limit it hit.
func TestPowerActionTimeout(t *testing.T) {
	settle := 400 * time.Millisecond
	b := startSim(t, sim.Options{PowerSettle: settle})
	if err := b.SetPower("node-0", true); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, testOptions())
	n := node(b, "node-0", redfish.KeyPowerStateChangeTimeout, 0.1) // shorter than the settle
	must(t, "soft power off within 10s", d.SoftPowerOff(ctx(t), n, 10*time.Second))
	if st := b.state(t, "node-0"); st.PowerState != sim.PowerOff {
		t.Fatalf("after soft power off the system reads %s", st.PowerState)
	}
	for name, act := range map[string]func() error{
		"soft reboot": func() error { return d.SoftReboot(ctx(t), n, 150*time.Millisecond) },
		"power on":    func() error { return d.SetPowerStateWithin(ctx(t), n, plugins.PowerOn, 150*time.Millisecond) },
		"reboot":      func() error { return d.RebootWithin(ctx(t), n, 150*time.Millisecond) },
	} {
		t.Run(name, func(t *testing.T) {
			must(t, "power off", d.SetPowerStateWithin(ctx(t), n, plugins.PowerOff, 10*time.Second))
			err := act()
			noSecret(t, err)
			if err == nil || !strings.Contains(err.Error(), "(the action's timeout)") || !plugins.IsRetryable(err) {
				t.Fatalf("err = %v, want a retryable timeout naming the action's timeout", err)
			}
		})
	}
	// Soft reboot of a system that is off powers it on: no OS to ask.
	must(t, "power off", d.SetPowerStateWithin(ctx(t), n, plugins.PowerOff, 10*time.Second))
	before := b.state(t, "node-0").Resets
	must(t, "soft reboot from off", d.SoftReboot(ctx(t), n, 10*time.Second))
	if st := b.state(t, "node-0"); st.PowerState != sim.PowerOn || st.Resets != before+1 {
		t.Errorf("after soft reboot from off: %s with %d resets, want On after one more than %d", st.PowerState, st.Resets, before)
	}
}
