package fake

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/rivetmetal/rivet/plugins"
)

// SoftPowerDelayKey is the driver_info key (seconds) for how long the
// simulated operating system takes to act on a soft power off or soft
// reboot. A soft action whose timeout is shorter fails, as one against an
// OS that ignores the ACPI request does, and leaves the power state alone.
const SoftPowerDelayKey = "fake_soft_power_delay"

// PowerDelayKey is the driver_info key (seconds) for how long reading the
// power state takes, as a BMC's answer does, so benchmarks can measure
// power-state sync against a known per-call latency.
const PowerDelayKey = "fake_power_delay"

// GetPowerState implements plugins.PowerStateGetter, after driver_info
// fake_power_delay seconds if set (ctx cuts it short).
func (d *Driver) GetPowerState(ctx context.Context, node plugins.Node) (plugins.PowerState, error) {
	if delay := delayOf(node, PowerDelayKey); delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return "", fmt.Errorf("driver fake: node %s: get power state: %w", node.UUID, ctx.Err())
		}
	}
	var ps plugins.PowerState
	err := d.read(node, "get power state", func(s *nodeState) { ps = s.power })
	return ps, err
}

// SetPowerState implements plugins.PowerSetter.
func (d *Driver) SetPowerState(_ context.Context, node plugins.Node, target plugins.PowerState) error {
	return d.with(node, "set power state", func(s *nodeState) error {
		if target != plugins.PowerOn && target != plugins.PowerOff {
			return fmt.Errorf("target %q: %w", target, plugins.ErrNotSupported)
		}
		s.power = target
		d.log.Debug("set power", "node", node.UUID, "target", string(target))
		return nil
	})
}

// Reboot implements plugins.Rebooter: the node ends up powered on.
func (d *Driver) Reboot(_ context.Context, node plugins.Node) error {
	return d.with(node, "reboot", func(s *nodeState) error { s.power = plugins.PowerOn; return nil })
}

// SetPowerStateWithin implements plugins.TimedPowerSetter: hard power
// changes are instant, so any timeout is met.
func (d *Driver) SetPowerStateWithin(ctx context.Context, node plugins.Node, target plugins.PowerState, _ time.Duration) error {
	return d.SetPowerState(ctx, node, target)
}

// RebootWithin implements plugins.TimedRebooter.
func (d *Driver) RebootWithin(ctx context.Context, node plugins.Node, _ time.Duration) error {
	return d.Reboot(ctx, node)
}

// SoftPowerOff implements plugins.SoftPowerer: the simulated OS shuts down
// after driver_info fake_soft_power_delay seconds (at once without it). A
// node already off is left alone.
func (d *Driver) SoftPowerOff(ctx context.Context, node plugins.Node, timeout time.Duration) error {
	var on bool
	if err := d.with(node, "soft power off", func(s *nodeState) error { on = s.power != plugins.PowerOff; return nil }); err != nil || !on {
		return err
	}
	return d.soft(ctx, node, "soft power off", plugins.PowerOff, timeout)
}

// SoftReboot implements plugins.SoftPowerer: the simulated OS restarts
// after driver_info fake_soft_power_delay seconds; a node that is off is
// powered on at once, as there is no OS to ask.
func (d *Driver) SoftReboot(ctx context.Context, node plugins.Node, timeout time.Duration) error {
	var off bool
	err := d.with(node, "soft reboot", func(s *nodeState) error {
		if off = s.power == plugins.PowerOff; off {
			s.power = plugins.PowerOn
		}
		return nil
	})
	if err != nil || off {
		return err
	}
	return d.soft(ctx, node, "soft reboot", plugins.PowerOn, timeout)
}

// soft waits out the simulated OS, within timeout (zero: no limit), and
// then leaves the node in final.
func (d *Driver) soft(ctx context.Context, node plugins.Node, op string, final plugins.PowerState, timeout time.Duration) error {
	delay := softDelay(node)
	if timeout > 0 && delay > timeout {
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-t.C:
			return fmt.Errorf("driver fake: node %s: %s: the operating system did not act within %s (it takes %s)", node.UUID, op, timeout, delay)
		case <-ctx.Done():
			return fmt.Errorf("driver fake: node %s: %s: %w", node.UUID, op, ctx.Err())
		}
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("driver fake: node %s: %s: %w", node.UUID, op, ctx.Err())
		}
	}
	return d.with(node, op, func(s *nodeState) error {
		s.power = final
		d.log.Debug(op, "node", node.UUID, "power_state", string(final))
		return nil
	})
}

// softDelay reads fake_soft_power_delay; absent or invalid is no delay.
func softDelay(node plugins.Node) time.Duration { return delayOf(node, SoftPowerDelayKey) }

// delayOf reads a driver_info delay in seconds; absent or invalid is none.
func delayOf(node plugins.Node, key string) time.Duration {
	secs, err := strconv.ParseFloat(fmt.Sprint(node.DriverInfo[key]), 64)
	if err != nil || secs <= 0 {
		return 0
	}
	return time.Duration(secs * float64(time.Second))
}
