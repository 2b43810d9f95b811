package ipmi

import (
	"errors"
	"strings"
	"sync"
	"testing"

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
		"soft power off":    {true, func(d *Driver, n plugins.Node) error { return d.SoftPowerOff(testCtx(t), n) }, false},
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

// TestSetPowerRejectsOtherTargets: only on and off are power targets.
func TestSetPowerRejectsOtherTargets(t *testing.T) {
	d := newDriver(t, Options{})
	for _, target := range []plugins.PowerState{plugins.Rebooting, plugins.PowerError, "soft power off"} {
		if err := d.SetPowerState(testCtx(t), plugins.Node{}, target); !errors.Is(err, plugins.ErrNotSupported) {
			t.Errorf("set %q: %v, want ErrNotSupported", target, err)
		}
	}
}
