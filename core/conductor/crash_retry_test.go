package conductor

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// crashingHW is the hooked fake whose plugin "crashes" during chosen
// calls: the call reaches the BMC (the fake applies it) and then the
// connection breaks, as a plugin killed mid-call looks to the conductor.
type crashingHW struct {
	*hookedFake
	mu      sync.Mutex
	crashes map[string]int // op → crashes left
	calls   map[string]int // op → calls seen
}

func (c *crashingHW) hit(op string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[op]++
	if c.crashes[op] > 0 {
		c.crashes[op]--
		return &host.PluginCrashedError{Driver: "crashy", Err: errors.New("rpc error: code = Unavailable desc = error reading from server: EOF")}
	}
	return nil
}

func (c *crashingHW) count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[op]
}

func (c *crashingHW) CheckPowerAction(plugins.PowerState, time.Duration) error { return nil }

func (c *crashingHW) PowerAction(ctx context.Context, n plugins.Node, target plugins.PowerState, timeout time.Duration) error {
	if err := host.LocalPowerActor(c.hookedFake).PowerAction(ctx, n, target, timeout); err != nil {
		return err
	}
	return c.hit(string(target))
}

func (c *crashingHW) GetPowerState(ctx context.Context, n plugins.Node) (plugins.PowerState, error) {
	ps, err := c.hookedFake.GetPowerState(ctx, n)
	if err != nil {
		return "", err
	}
	return ps, c.hit("get power state")
}

func (c *crashingHW) SetBootDevice(ctx context.Context, n plugins.Node, s plugins.BootDeviceSetting) error {
	if err := c.hookedFake.SetBootDevice(ctx, n, s); err != nil {
		return err
	}
	return c.hit("set boot device")
}

func (c *crashingHW) GetBootDevice(ctx context.Context, n plugins.Node) (plugins.BootDeviceSetting, error) {
	bd, err := c.hookedFake.GetBootDevice(ctx, n)
	if err != nil {
		return bd, err
	}
	return bd, c.hit("get boot device")
}

func crashHarness(t *testing.T, crashes map[string]int) (*harness, *crashingHW, *objects.Node) {
	var c *crashingHW
	h := startHarness(t, nil, "cond-a", nil, func(hw *hookedFake) StaticDrivers {
		c = &crashingHW{hookedFake: hw, crashes: crashes, calls: map[string]int{}}
		return StaticDrivers{fake.HardwareType: c}
	})
	return h, c, h.enroll("crashy")
}

// TestPowerActionRepeatedAfterPluginCrash: a hard power on or off the
// plugin died during is sent once more to the restarted plugin and the
// node records the state reached, no last_error. On 9b9faca the node kept
// last_error "driver plugin crashed" and its old power state.
func TestPowerActionRepeatedAfterPluginCrash(t *testing.T) {
	for _, target := range []plugins.PowerState{plugins.PowerOn, plugins.PowerOff} {
		t.Run(string(target), func(t *testing.T) {
			h, c, n := crashHarness(t, map[string]int{string(target): 1})
			if target == plugins.PowerOff { // start from on
				c.hookedFake.Driver.SetPowerState(context.Background(), pluginNode(n), plugins.PowerOn)
			}
			if err := h.api.ChangeNodePowerState(context.Background(), n, string(target), 0); err != nil {
				t.Fatal(err)
			}
			got := h.waitFor(n.UUID, "power action done", func(n *objects.Node) bool { return n.TargetPowerState == nil && n.Reservation == nil })
			if deref(got.PowerState) != string(target) || got.LastError != nil {
				t.Fatalf("power %q, last_error %q; want %q and none", deref(got.PowerState), deref(got.LastError), target)
			}
			if calls := c.count(string(target)); calls != 2 {
				t.Fatalf("%s reached the driver %d times, want 2 (once, then once more after the crash)", target, calls)
			}
		})
	}
}

// TestRebootNotRepeatedAfterPluginCrash: a reboot (or a soft action) the
// plugin died during is not sent again; the power state is read back from
// the BMC and recorded, and last_error says what happened.
func TestRebootNotRepeatedAfterPluginCrash(t *testing.T) {
	for _, target := range []plugins.PowerState{plugins.Rebooting, plugins.SoftPowerOff, plugins.SoftRebooting} {
		t.Run(string(target), func(t *testing.T) {
			h, c, n := crashHarness(t, map[string]int{string(target): 1})
			c.hookedFake.Driver.SetPowerState(context.Background(), pluginNode(n), plugins.PowerOn)
			if err := h.api.ChangeNodePowerState(context.Background(), n, string(target), 0); err != nil {
				t.Fatal(err)
			}
			got := h.waitFor(n.UUID, "power action done", func(n *objects.Node) bool { return n.TargetPowerState == nil && n.Reservation == nil })
			want, _ := c.hookedFake.Driver.GetPowerState(context.Background(), pluginNode(n))
			if deref(got.PowerState) != string(want) {
				t.Errorf("power state %q, want what the BMC reports, %q", deref(got.PowerState), want)
			}
			le := deref(got.LastError)
			for _, part := range []string{"driver plugin crashed", "not repeated", "the BMC now reports " + string(want)} {
				if !strings.Contains(le, part) {
					t.Errorf("last_error %q does not say %q", le, part)
				}
			}
			if calls := c.count(string(target)); calls != 1 {
				t.Errorf("%s reached the driver %d times, want 1", target, calls)
			}
		})
	}
}

// TestBootDeviceRepeatedAfterPluginCrash: boot device reads and sets are
// repeated once after a crash.
func TestBootDeviceRepeatedAfterPluginCrash(t *testing.T) {
	h, c, n := crashHarness(t, map[string]int{"set boot device": 1, "get boot device": 1})
	ctx := context.Background()
	if err := h.api.SetBootDevice(ctx, n, "pxe", false); err != nil {
		t.Fatalf("set boot device: %v", err)
	}
	bd, err := h.api.GetBootDevice(ctx, n)
	if err != nil || bd.BootDevice == nil || *bd.BootDevice != "pxe" {
		t.Fatalf("get boot device: %+v, %v", bd, err)
	}
	if c.count("set boot device") != 2 || c.count("get boot device") != 2 {
		t.Fatalf("calls %v, want each twice", c.calls)
	}
}

// TestPowerOnCrashingTwice: a power on whose repeat crashes too is not sent
// a third time; the state is read back and last_error says so.
func TestPowerOnCrashingTwice(t *testing.T) {
	h, c, n := crashHarness(t, map[string]int{string(plugins.PowerOn): 2})
	if err := h.api.ChangeNodePowerState(context.Background(), n, string(plugins.PowerOn), 0); err != nil {
		t.Fatal(err)
	}
	got := h.waitFor(n.UUID, "power action done", func(n *objects.Node) bool { return n.TargetPowerState == nil && n.Reservation == nil })
	if deref(got.PowerState) != string(plugins.PowerOn) {
		t.Errorf("power state %q, want what the BMC reports: power on", deref(got.PowerState))
	}
	for _, part := range []string{"driver plugin crashed", "repeated once", "the BMC now reports power on"} {
		if !strings.Contains(deref(got.LastError), part) {
			t.Errorf("last_error %q does not say %q", deref(got.LastError), part)
		}
	}
	if calls := c.count(string(plugins.PowerOn)); calls != 2 {
		t.Errorf("power on reached the driver %d times, want 2", calls)
	}
}
