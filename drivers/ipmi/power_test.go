package ipmi

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bougou/go-ipmi/pkg/hal/mock"

	"github.com/rivetmetal/rivet/plugins"
)

// TestPower drives each power action against the in-process BMC and reads
// the chassis state the BMC holds, not only what the driver reports.
func TestPower(t *testing.T) {
	tests := map[string]struct {
		start  bool // chassis on before the action
		action func(d *Driver, n plugins.Node) error
		wantOn bool
	}{
		"on from off":       {false, func(d *Driver, n plugins.Node) error { return d.SetPowerState(testCtx(t), n, plugins.PowerOn) }, true},
		"on when on":        {true, func(d *Driver, n plugins.Node) error { return d.SetPowerState(testCtx(t), n, plugins.PowerOn) }, true},
		"off from on":       {true, func(d *Driver, n plugins.Node) error { return d.SetPowerState(testCtx(t), n, plugins.PowerOff) }, false},
		"off when off":      {false, func(d *Driver, n plugins.Node) error { return d.SetPowerState(testCtx(t), n, plugins.PowerOff) }, false},
		"reboot from on":    {true, func(d *Driver, n plugins.Node) error { return d.Reboot(testCtx(t), n) }, true},
		"reboot from off":   {false, func(d *Driver, n plugins.Node) error { return d.Reboot(testCtx(t), n) }, true},
		"power cycle":       {true, func(d *Driver, n plugins.Node) error { return d.PowerCycle(testCtx(t), n) }, true},
		"hard reset":        {true, func(d *Driver, n plugins.Node) error { return d.HardReset(testCtx(t), n) }, true},
		"soft power off":    {true, func(d *Driver, n plugins.Node) error { return d.SoftPowerOff(testCtx(t), n, 0) }, false},
		"soft off when off": {false, func(d *Driver, n plugins.Node) error { return d.SoftPowerOff(testCtx(t), n, time.Second) }, false},
		"soft reboot":       {true, func(d *Driver, n plugins.Node) error { return d.SoftReboot(testCtx(t), n, 5*time.Second) }, true},
		"soft reboot off":   {false, func(d *Driver, n plugins.Node) error { return d.SoftReboot(testCtx(t), n, 0) }, true},
		"on within": {false, func(d *Driver, n plugins.Node) error {
			return d.SetPowerStateWithin(testCtx(t), n, plugins.PowerOn, time.Second)
		}, true},
		"reboot within":     {true, func(d *Driver, n plugins.Node) error { return d.RebootWithin(testCtx(t), n, time.Second) }, true},
		"tear down from on": {true, func(d *Driver, n plugins.Node) error { return d.TearDown(testCtx(t), n) }, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			bmc := startBMC(t, bmcConfig{})
			_ = bmc.chassis.SetPower(testCtx(t), tc.start)
			d := newDriver(t, Options{})
			n := bmc.node(nil)
			if err := tc.action(d, n); err != nil {
				t.Fatal(err)
			}
			if got := bmc.chassis.on(t); got != tc.wantOn {
				t.Errorf("chassis on = %v, want %v", got, tc.wantOn)
			}
			want := plugins.PowerOff
			if tc.wantOn {
				want = plugins.PowerOn
			}
			if got, err := d.GetPowerState(testCtx(t), n); err != nil || got != want {
				t.Errorf("GetPowerState = %q, %v; want %q", got, err, want)
			}
		})
	}
}

// TestRebootGoesThroughOff checks Reboot really powers off first (the BMC
// sees a power down) instead of relying on Chassis Control power cycle.
func TestRebootGoesThroughOff(t *testing.T) {
	var mu sync.Mutex
	var seen []bool
	ch := &chassisSim{Chassis: &mock.Chassis{On: true}}
	ch.SetPowerHook = func(on bool) error { // runs under the chassis lock
		mu.Lock()
		defer mu.Unlock()
		seen, ch.On = append(seen, on), on
		return nil
	}
	bmc := startBMC(t, bmcConfig{chasis: ch})
	d := newDriver(t, Options{})
	if err := d.Reboot(testCtx(t), bmc.node(nil)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] || !seen[1] {
		t.Errorf("BMC saw power requests %v, want [false true]", seen)
	}
	if bmc.chassis.PowerCycles != 0 {
		t.Errorf("power cycle used %d times", bmc.chassis.PowerCycles)
	}
}

// TestPowerTimeout: a chassis that ignores power off makes SetPowerState
// fail after power_state_change_timeout, naming the states, not retryable.
func TestPowerTimeout(t *testing.T) {
	ch := &chassisSim{Chassis: &mock.Chassis{On: true, SetPowerHook: func(bool) error { return nil }}} // accepted, never done
	bmc := startBMC(t, bmcConfig{chasis: ch})
	d := newDriver(t, Options{})
	err := d.SetPowerState(testCtx(t), bmc.node(plugins.DriverInfo{KeyPowerStateChangeTimeout: 0.5}), plugins.PowerOff)
	if err == nil {
		t.Fatal("SetPowerState succeeded on a chassis that stays on")
	}
	if plugins.IsRetryable(err) || errors.Is(err, plugins.ErrBMCUnreachable) {
		t.Errorf("error %v: want a plain failure", err)
	}
	for _, want := range []string{"ipmi 127.0.0.1:", "set power off", `"power on"`, `"power off"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestSoftPowerTimeout: the action's timeout, not
// ipmi_power_state_change_timeout, bounds the wait for a soft power off: an
// OS slower than the node's default is waited for, one that ignores the
// ACPI request fails the action after the timeout, and no hard power-off is
// ever sent instead.
func TestSoftPowerTimeout(t *testing.T) {
	tests := map[string]struct {
		softDelay time.Duration
		timeout   time.Duration
		wantErr   bool
	}{
		"slow OS, long timeout": {400 * time.Millisecond, 10 * time.Second, false},
		"OS ignores ACPI":       {-1, 2 * time.Second, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var powerDowns int
			ch := &chassisSim{Chassis: &mock.Chassis{On: true}, softDelay: tc.softDelay}
			bmc := startBMC(t, bmcConfig{chasis: ch})
			ch.SetPowerHook = func(on bool) error {
				mu.Lock()
				defer mu.Unlock()
				if !on {
					powerDowns++
				}
				ch.On = on
				return nil
			}
			d := newDriver(t, Options{})
			n := bmc.node(plugins.DriverInfo{KeyPowerStateChangeTimeout: 0.1})
			err := d.SoftPowerOff(testCtx(t), n, tc.timeout)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), `still "power on"`) || !strings.Contains(err.Error(), "soft power off") {
					t.Fatalf("err = %v, want the node still on after the timeout", err)
				}
				if bmc.chassis.on(t) != true {
					t.Error("a soft power off the OS ignored turned the node off")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if bmc.chassis.On || powerDowns != 1 {
				t.Errorf("chassis on %v after %d power downs; want off after the OS's one", bmc.chassis.On, powerDowns)
			}
		})
	}
}

// TestSetPowerRejectsOtherTargets: only on and off are power targets.
func TestSetPowerRejectsOtherTargets(t *testing.T) {
	d := newDriver(t, Options{})
	for _, target := range []plugins.PowerState{plugins.Rebooting, plugins.PowerError, "soft power off"} {
		if err := d.SetPowerState(testCtx(t), plugins.Node{}, target); !errors.Is(err, plugins.ErrNotSupported) {
			t.Errorf("set %q: %v, want ErrNotSupported", target, err)
		}
	}
}

// TestPowerTimeoutDuringPoll: when the wait's time runs out while a poll is
// still waiting for the BMC, the error is the state the BMC last reported,
// not the cut-short poll's "BMC unreachable" (which would make it look
// retryable and hide the state).
func TestPowerTimeoutDuringPoll(t *testing.T) {
	ch := &chassisSim{Chassis: &mock.Chassis{On: true, SetPowerHook: func(bool) error { return nil }}, // accepted, never done
		pollDelay: func(n int) time.Duration {
			if n == 1 {
				return 0
			}
			return 2 * time.Second // outlasts the 0.5 s wait
		}}
	bmc := startBMC(t, bmcConfig{chasis: ch})
	d := newDriver(t, Options{})
	err := d.SetPowerState(testCtx(t), bmc.node(plugins.DriverInfo{KeyPowerStateChangeTimeout: 0.5}), plugins.PowerOff)
	if err == nil {
		t.Fatal("SetPowerState succeeded on a chassis that stays on")
	}
	if plugins.IsRetryable(err) || errors.Is(err, plugins.ErrBMCUnreachable) {
		t.Errorf("error %v: want a plain failure", err)
	}
	if want := `node still "power on" after 500ms, want "power off"`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
}
