package ipmi

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/plugins"
)

// TestIPMISimPower: power on, off and cycle against Debian ipmi_sim, checked
// in the simulator's chassis state, not only through the driver.
func TestIPMISimPower(t *testing.T) {
	sim := startSims(t, 1, false)
	d := newDriver(t, Options{})
	n := sim.node(0, nil)
	for _, target := range []plugins.PowerState{plugins.PowerOn, plugins.PowerOff} {
		if err := d.SetPowerState(testCtx(t), n, target); err != nil {
			t.Fatal(err)
		}
		want := map[plugins.PowerState]string{plugins.PowerOn: "1", plugins.PowerOff: "0"}[target]
		if got := sim.file(t, 0, "power"); got != want {
			t.Errorf("after set %q: simulator power file %q, want %q", target, got, want)
		}
		if got, err := d.GetPowerState(testCtx(t), n); err != nil || got != target {
			t.Errorf("GetPowerState = %q, %v; want %q", got, err, target)
		}
	}
	// ipmi_sim cycles by itself: power 0 at once, power 1 about 1 s later,
	// so PowerCycle returning means the node came back on.
	if err := d.SetPowerState(testCtx(t), n, plugins.PowerOn); err != nil {
		t.Fatal(err)
	}
	if err := d.PowerCycle(testCtx(t), n); err != nil {
		t.Fatal(err)
	}
	if got := sim.file(t, 0, "power"); got != "1" {
		t.Errorf("after power cycle: simulator power %q, want 1", got)
	}
	events := sim.file(t, 0, "events.log")
	off := strings.LastIndex(events, "set power 0")
	on := strings.LastIndex(events, "set power 1")
	if off < 0 || on < off {
		t.Errorf("power cycle did not go off then on; events:\n%s", events)
	}
	// Reboot from off must not use Chassis Control power cycle (0xD5 on
	// real BMCs): it powers on.
	if err := d.SetPowerState(testCtx(t), n, plugins.PowerOff); err != nil {
		t.Fatal(err)
	}
	if err := d.Reboot(testCtx(t), n); err != nil {
		t.Fatal(err)
	}
	if got := sim.file(t, 0, "power"); got != "1" {
		t.Errorf("after reboot: simulator power %q, want 1", got)
	}
}

// TestIPMISimSoftPower: soft power off reaches ipmi_sim as Chassis Control
// soft shutdown (its hook's "set shutdown 1", never a hard "set power 0"),
// and soft reboot is that soft shutdown followed by a power on.
func TestIPMISimSoftPower(t *testing.T) {
	sim := startSims(t, 1, false)
	d := newDriver(t, Options{})
	n := sim.node(0, nil)
	if err := d.SetPowerState(testCtx(t), n, plugins.PowerOn); err != nil {
		t.Fatal(err)
	}
	mark := len(sim.file(t, 0, "events.log"))
	if err := d.SoftPowerOff(testCtx(t), n, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := sim.file(t, 0, "power"); got != "0" {
		t.Errorf("after soft power off: simulator power %q, want 0", got)
	}
	events := sim.file(t, 0, "events.log")[mark:]
	if !strings.Contains(events, "set shutdown 1") || strings.Contains(events, "set power 0") {
		t.Errorf("soft power off sent, want a soft shutdown and no hard power off:\n%s", events)
	}
	if err := d.SetPowerState(testCtx(t), n, plugins.PowerOn); err != nil {
		t.Fatal(err)
	}
	mark = len(sim.file(t, 0, "events.log"))
	if err := d.SoftReboot(testCtx(t), n, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	events = sim.file(t, 0, "events.log")[mark:]
	off, on := strings.Index(events, "set shutdown 1"), strings.Index(events, "set power 1")
	if off < 0 || on < off || strings.Contains(events, "set power 0") {
		t.Errorf("soft reboot sent, want soft shutdown then power on:\n%s", events)
	}
	if got := sim.file(t, 0, "power"); got != "1" {
		t.Errorf("after soft reboot: simulator power %q, want 1", got)
	}
}

// TestIPMISimBootDevice: ipmi_sim keeps only the device selector, so a
// read-back has the device right, persistent false and the mode unknown,
// whatever was set.
func TestIPMISimBootDevice(t *testing.T) {
	sim := startSims(t, 1, false)
	d := newDriver(t, Options{})
	n := sim.node(0, nil)
	tests := map[plugins.BootDevice]string{plugins.BootPXE: "pxe", plugins.BootDisk: "default", plugins.BootCDROM: "cdrom", plugins.BootBIOS: "bios"}
	for dev, simName := range tests {
		t.Run(string(dev), func(t *testing.T) {
			set := plugins.BootDeviceSetting{Device: dev, Persistent: true, Mode: plugins.BootModeUEFI}
			if err := d.SetBootDevice(testCtx(t), n, set); err != nil {
				t.Fatal(err)
			}
			if got := sim.file(t, 0, "boot"); got != simName {
				t.Errorf("simulator boot file %q, want %q", got, simName)
			}
			got, err := d.GetBootDevice(testCtx(t), n)
			if err != nil {
				t.Fatal(err)
			}
			if want := (plugins.BootDeviceSetting{Device: dev}); got != want {
				t.Errorf("GetBootDevice = %+v, want %+v (ipmi_sim drops persistent and EFI)", got, want)
			}
		})
	}
}

// TestIPMISimErrors: the real peer's refusals map to the SDK's kinds.
func TestIPMISimErrors(t *testing.T) {
	sim := startSims(t, 1, false)
	d := newDriver(t, Options{})
	if _, err := d.GetPowerState(testCtx(t), sim.node(0, plugins.DriverInfo{KeyPassword: "not-" + testPassword})); !errors.Is(err, plugins.ErrInvalidDriverInfo) ||
		strings.Contains(err.Error(), testPassword) {
		t.Errorf("wrong password: %v, want ErrInvalidDriverInfo without the password", err)
	}
	err := d.InjectNMI(testCtx(t), sim.node(0, nil))
	if !errors.Is(err, plugins.ErrNotSupported) || !strings.Contains(err.Error(), "0xcc") {
		t.Errorf("NMI: %v, want ErrNotSupported naming cc 0xcc", err)
	}
}

// TestIPMISimReconnect: after the simulator restarts (every session lost)
// the next call reopens the session and succeeds, and says so in the log.
func TestIPMISimReconnect(t *testing.T) {
	sim := startSims(t, 1, false)
	var logs syncBuffer
	d := New(slog.New(slog.NewTextHandler(&logs, nil)), Options{})
	t.Cleanup(func() { d.Close(testCtx(t)) })
	n := sim.node(0, plugins.DriverInfo{KeyTimeout: 0.3})
	if err := d.SetPowerState(testCtx(t), n, plugins.PowerOn); err != nil {
		t.Fatal(err)
	}
	sim.restart(t)
	if got, err := d.GetPowerState(testCtx(t), n); err != nil || got != plugins.PowerOn {
		t.Fatalf("after restart: %q, %v; want %q", got, err, plugins.PowerOn)
	}
	if !strings.Contains(logs.String(), "session lost") {
		t.Errorf("reconnect not logged:\n%s", logs.String())
	}
}

// TestIPMISimFleet: 50 BMCs (one ipmi_sim process) driven concurrently —
// status, on, and off again for every other one — each checked in its own
// state file.
func TestIPMISimFleet(t *testing.T) {
	const n = 50
	sim := startSims(t, n, true)
	d := newDriver(t, Options{})
	var wg sync.WaitGroup
	errs := make([]error, n)
	// One single-threaded ipmi_sim serves all 50: on a loaded machine its
	// answers take seconds, so the timeouts are generous (this checks
	// behaviour, not speed) and a retry does not open a second session
	// while the first one's answer is merely late.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range n {
		wg.Go(func() {
			node := sim.node(i, plugins.DriverInfo{KeyTimeout: 6, KeyRetries: 2, KeyPowerStateChangeTimeout: 60})
			if _, errs[i] = d.GetPowerState(ctx, node); errs[i] != nil {
				return
			}
			if errs[i] = d.SetPowerState(ctx, node, plugins.PowerOn); errs[i] != nil || i%2 == 0 {
				return
			}
			errs[i] = d.SetPowerState(ctx, node, plugins.PowerOff)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		want := map[bool]string{true: "1", false: "0"}[i%2 == 0]
		if got := sim.file(t, i, "power"); got != want {
			t.Errorf("BMC %d: power file %q, want %q", i, got, want)
		}
	}
}
