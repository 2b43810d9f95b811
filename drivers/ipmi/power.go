package ipmi

import (
	"context"
	"fmt"
	"time"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/command/chassis"

	"github.com/rivetmetal/rivet/plugins"
)

// Polling while waiting for a power state starts at pollFirst and grows to
// pollMax; pacing (MinCommandInterval) comes on top.
const (
	pollFirst = 200 * time.Millisecond
	pollMax   = 2 * time.Second
)

// powerState reads the chassis power state (Get Chassis Status).
func (d *Driver) powerState(ctx context.Context, p params) (plugins.PowerState, error) {
	state := plugins.PowerError
	err := d.exchange(ctx, p, "get power state", func(ctx context.Context, c *client.Client) error {
		st, err := c.GetChassisStatus(ctx)
		if err == nil {
			state = plugins.PowerOff
			if st.PowerIsOn {
				state = plugins.PowerOn
			}
		}
		return err
	})
	return state, err
}

// control sends one Chassis Control command.
func (d *Driver) control(ctx context.Context, p params, op string, action chassis.ChassisControl) error {
	return d.exchange(ctx, p, op, func(ctx context.Context, c *client.Client) error {
		_, err := c.ChassisControl(ctx, action)
		return err
	})
}

// waitPower polls until the node is in target, for at most
// PowerStateChangeTimeout (and ctx). A BMC that misses a poll or two while
// the node changes state is tolerated until the deadline.
func (d *Driver) waitPower(ctx context.Context, p params, op string, target plugins.PowerState) error {
	wctx, cancel := context.WithTimeout(ctx, p.powerTimeout)
	defer cancel()
	delay := pollFirst
	deadline, _ := wctx.Deadline()
	var last, known plugins.PowerState // known: what the last answered poll said
	var lastErr error
	cutShort := false // the last poll failed because this wait's time was up
	for {
		last, lastErr = d.powerState(wctx, p)
		cutShort = lastErr != nil && !time.Now().Before(deadline)
		if lastErr == nil {
			known = last
			if last == target {
				return nil
			}
		}
		if lastErr != nil && !plugins.IsRetryable(lastErr) {
			return lastErr
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-wctx.Done():
			t.Stop()
			if ctx.Err() != nil {
				return classify(ctx, p, op, ctx.Err())
			}
			// A poll cut short by this wait's own deadline says nothing
			// about the BMC: report the state the BMC last gave, if any.
			if lastErr != nil && (known == "" || !cutShort) {
				return fmt.Errorf("ipmi %s: %s: node did not reach %q within %s: %w", p.addr(), op, target, p.powerTimeout, lastErr)
			}
			return fmt.Errorf("ipmi %s: %s: node still %q after %s, want %q", p.addr(), op, known, p.powerTimeout, target)
		}
		delay = min(delay*3/2, pollMax)
	}
}

// setPower switches the node to target and waits until it is there.
func (d *Driver) setPower(ctx context.Context, p params, target plugins.PowerState) error {
	op, action := "set power on", chassis.ChassisControlPowerUp
	if target == plugins.PowerOff {
		op, action = "set power off", chassis.ChassisControlPowerDown
	}
	if err := d.control(ctx, p, op, action); err != nil {
		// Some BMCs refuse a no-op (0xD5); that is success if the node is there.
		if cc, ok := completionCode(err); !ok || cc != ccNotInPresentState {
			return err
		}
		if state, gerr := d.powerState(ctx, p); gerr != nil || state != target {
			return err
		}
	}
	return d.waitPower(ctx, p, op, target)
}

// GetPowerState implements plugins.PowerStateGetter.
func (d *Driver) GetPowerState(ctx context.Context, node plugins.Node) (plugins.PowerState, error) {
	p, err := parseInfo(node.DriverInfo, d.opts)
	if err != nil {
		return plugins.PowerError, fmt.Errorf("ipmi: get power state: %w", err)
	}
	return d.powerState(ctx, p)
}

// SetPowerState implements plugins.PowerSetter with hard power on/off and
// returns once the node reports target.
func (d *Driver) SetPowerState(ctx context.Context, node plugins.Node, target plugins.PowerState) error {
	return d.SetPowerStateWithin(ctx, node, target, 0)
}

// SetPowerStateWithin implements plugins.TimedPowerSetter: SetPowerState
// waiting at most timeout (zero: ipmi_power_state_change_timeout).
func (d *Driver) SetPowerStateWithin(ctx context.Context, node plugins.Node, target plugins.PowerState, timeout time.Duration) error {
	if target != plugins.PowerOn && target != plugins.PowerOff {
		return fmt.Errorf("ipmi: set power %q: %w", target, plugins.ErrNotSupported)
	}
	p, err := d.powerParams(node, "set "+string(target), timeout)
	if err != nil {
		return err
	}
	return d.setPower(ctx, p, target)
}

// Reboot implements plugins.Rebooter the way Ironic's ipmitool driver does:
// power off, wait until off, power on, wait until on. Chassis Control power
// cycle is not used because BMCs refuse it (0xD5) on a node that is off.
func (d *Driver) Reboot(ctx context.Context, node plugins.Node) error {
	return d.RebootWithin(ctx, node, 0)
}

// RebootWithin implements plugins.TimedRebooter: Reboot with each wait
// bounded by timeout (zero: ipmi_power_state_change_timeout).
func (d *Driver) RebootWithin(ctx context.Context, node plugins.Node, timeout time.Duration) error {
	p, err := d.powerParams(node, "reboot", timeout)
	if err != nil {
		return err
	}
	return d.reboot(ctx, p)
}

func (d *Driver) reboot(ctx context.Context, p params) error {
	if err := d.setPower(ctx, p, plugins.PowerOff); err != nil {
		return err
	}
	return d.setPower(ctx, p, plugins.PowerOn)
}

// powerParams parses node's driver_info for op; a positive timeout replaces
// ipmi_power_state_change_timeout as the bound of every wait.
func (d *Driver) powerParams(node plugins.Node, op string, timeout time.Duration) (params, error) {
	p, err := parseInfo(node.DriverInfo, d.opts)
	if err != nil {
		return params{}, fmt.Errorf("ipmi: %s: %w", op, err)
	}
	if timeout > 0 {
		p.powerTimeout = timeout
	}
	return p, nil
}

// PowerCycle sends Chassis Control power cycle (or power up when the BMC
// refuses a cycle because the node is off) and waits until the node is on.
// It is not yet reachable through the SDK; Reboot is the portable way.
func (d *Driver) PowerCycle(ctx context.Context, node plugins.Node) error {
	return d.cycleOrUp(ctx, node, "power cycle", chassis.ChassisControlPowerCycle)
}

// HardReset sends Chassis Control hard reset (or power up on a node that is
// off) and waits until the node is on.
func (d *Driver) HardReset(ctx context.Context, node plugins.Node) error {
	return d.cycleOrUp(ctx, node, "hard reset", chassis.ChassisControlHardReset)
}

func (d *Driver) cycleOrUp(ctx context.Context, node plugins.Node, op string, action chassis.ChassisControl) error {
	p, err := parseInfo(node.DriverInfo, d.opts)
	if err != nil {
		return fmt.Errorf("ipmi: %s: %w", op, err)
	}
	err = d.control(ctx, p, op, action)
	if cc, ok := completionCode(err); ok && cc == ccNotInPresentState {
		err = d.control(ctx, p, op+" (node off: power on)", chassis.ChassisControlPowerUp)
	}
	if err != nil {
		return err
	}
	return d.waitPower(ctx, p, op, plugins.PowerOn)
}

// SoftPowerOff implements plugins.SoftPowerer: Chassis Control soft
// shutdown (an ACPI power button press asking the OS to shut down), then it
// polls until the node is off, for at most timeout (zero:
// ipmi_power_state_change_timeout). A node already off is left alone; a
// hard power-off is never substituted.
func (d *Driver) SoftPowerOff(ctx context.Context, node plugins.Node, timeout time.Duration) error {
	p, err := d.powerParams(node, "soft power off", timeout)
	if err != nil {
		return err
	}
	return d.softOff(ctx, p)
}

// SoftReboot implements plugins.SoftPowerer as Ironic's ipmitool driver
// does: a soft power off, then power on, each wait bounded by timeout.
// IPMI has no graceful restart; a node that is off is just powered on.
func (d *Driver) SoftReboot(ctx context.Context, node plugins.Node, timeout time.Duration) error {
	p, err := d.powerParams(node, "soft reboot", timeout)
	if err != nil {
		return err
	}
	if err := d.softOff(ctx, p); err != nil {
		return err
	}
	return d.setPower(ctx, p, plugins.PowerOn)
}

func (d *Driver) softOff(ctx context.Context, p params) error {
	const op = "soft power off"
	if state, err := d.powerState(ctx, p); err != nil || state == plugins.PowerOff {
		return err
	}
	if err := d.control(ctx, p, op, chassis.ChassisControlSoftShutdown); err != nil {
		// A node that went off meanwhile makes some BMCs answer 0xD5.
		if cc, ok := completionCode(err); !ok || cc != ccNotInPresentState {
			return err
		}
		if state, gerr := d.powerState(ctx, p); gerr != nil || state != plugins.PowerOff {
			return err
		}
	}
	return d.waitPower(ctx, p, op, plugins.PowerOff)
}
