package redfish

import (
	"context"
	"fmt"
	"time"

	"github.com/stmcginnis/gofish/schemas"

	"github.com/rivetmetal/rivet/plugins"
)

// powerOf maps a Redfish PowerState to the SDK's as Ironic does: a
// transition reads as the state it heads for.
func powerOf(s schemas.PowerState) plugins.PowerState {
	switch s {
	case schemas.OnPowerState, schemas.PoweringOnPowerState:
		return plugins.PowerOn
	case schemas.OffPowerState, schemas.PoweringOffPowerState:
		return plugins.PowerOff
	}
	return plugins.PowerError
}

// GetPowerState implements plugins.PowerStateGetter.
func (d *Driver) GetPowerState(ctx context.Context, node plugins.Node) (plugins.PowerState, error) {
	var ps schemas.PowerState
	err := d.call(ctx, node, "get power state", func(t target) error {
		sys, err := t.system()
		if err == nil {
			ps = sys.PowerState
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return powerOf(ps), nil
}

// SetPowerState implements plugins.PowerSetter: On (or ForceOn) to power
// on, ForceOff to power off, then it waits until the system reads the state
// (power_state_change_timeout). A node already there is left alone.
func (d *Driver) SetPowerState(ctx context.Context, node plugins.Node, target plugins.PowerState) error {
	return d.SetPowerStateWithin(ctx, node, target, 0)
}

// SetPowerStateWithin implements plugins.TimedPowerSetter: SetPowerState
// waiting at most timeout (zero: power_state_change_timeout).
func (d *Driver) SetPowerStateWithin(ctx context.Context, node plugins.Node, target plugins.PowerState, timeout time.Duration) error {
	switch target {
	case plugins.PowerOn:
		return d.switchPower(ctx, node, "set power state", schemas.OnPowerState, actOn, timeout)
	case plugins.PowerOff:
		return d.switchPower(ctx, node, "set power state", schemas.OffPowerState, actOff, timeout)
	}
	return fmt.Errorf("driver redfish: node %s: set power state %q: %w", node.UUID, target, plugins.ErrNotSupported)
}

// Reboot implements plugins.Rebooter: ForceRestart, or On for a node that
// is off (some BMCs refuse to restart a powered-off system), then it waits
// until the system is On.
func (d *Driver) Reboot(ctx context.Context, node plugins.Node) error {
	return d.RebootWithin(ctx, node, 0)
}

// RebootWithin implements plugins.TimedRebooter: Reboot waiting at most
// timeout (zero: power_state_change_timeout).
func (d *Driver) RebootWithin(ctx context.Context, node plugins.Node, timeout time.Duration) error {
	return d.restart(ctx, node, "reboot", actRestart, timeout)
}

// SoftPowerOff implements plugins.SoftPowerer: it asks the OS to shut down
// (GracefulShutdown) and polls until the system is Off, for at most timeout
// (zero: power_state_change_timeout). A system already off is left alone;
// one that does not advertise GracefulShutdown answers ErrNotSupported, and
// a hard power-off is never substituted.
func (d *Driver) SoftPowerOff(ctx context.Context, node plugins.Node, timeout time.Duration) error {
	return d.switchPower(ctx, node, "soft power off", schemas.OffPowerState, actSoftOff, timeout)
}

// SoftReboot implements plugins.SoftPowerer: it asks the OS to restart
// (GracefulRestart) and polls until the system is On, for at most timeout;
// a system that is off is powered On, as there is no OS to ask.
// ErrNotSupported when GracefulRestart is not advertised.
func (d *Driver) SoftReboot(ctx context.Context, node plugins.Node, timeout time.Duration) error {
	return d.restart(ctx, node, "soft reboot", actSoftRestart, timeout)
}

// restart resets the system with act, or powers it On when it is off,
// then waits for On.
func (d *Driver) restart(ctx context.Context, node plugins.Node, op string, act action, timeout time.Duration) error {
	err := d.call(ctx, node, op, func(t target) error {
		sys, err := t.system()
		if err != nil {
			return err
		}
		if powerOf(sys.PowerState) == plugins.PowerOff {
			return reset(sys, actOn)
		}
		return reset(sys, act)
	})
	if err != nil {
		return err
	}
	return d.waitPower(ctx, node, op, schemas.OnPowerState, timeout)
}

// switchPower resets the system with act unless it is at or heading for
// want already, then waits for want.
func (d *Driver) switchPower(ctx context.Context, node plugins.Node, op string, want schemas.PowerState, act action, timeout time.Duration) error {
	err := d.call(ctx, node, op, func(t target) error {
		sys, err := t.system()
		if err != nil {
			return err
		}
		if powerOf(sys.PowerState) == powerOf(want) {
			return nil
		}
		return reset(sys, act)
	})
	if err != nil {
		return err
	}
	return d.waitPower(ctx, node, op, want, timeout)
}

// waitPower polls until the system reads want, pausing between reads
// (PowerPollInterval, growing by half up to four times it) and not holding
// a request slot while it pauses. The deadline is timeout, or the node's
// power_state_change_timeout when timeout is zero; it does not bound each
// read, so a slow power change never counts as a BMC failure.
func (d *Driver) waitPower(ctx context.Context, node plugins.Node, op string, want schemas.PowerState, timeout time.Duration) error {
	start := time.Now()
	pause := d.opts.PowerPollInterval
	var last schemas.PowerState
	var ni nodeInfo
	for {
		err := d.call(ctx, node, op, func(t target) error {
			ni = t.ni
			sys, err := t.system()
			if err == nil {
				last = sys.PowerState
			}
			return err
		})
		if err != nil {
			return err
		}
		if last == want {
			return nil
		}
		limit, source := ni.powerTimeout, "power_state_change_timeout"
		if timeout > 0 {
			limit, source = timeout, "the action's timeout"
		}
		if time.Since(start)+pause > limit {
			return &Error{Node: node.UUID, BMC: ni.address, Op: op, retryable: true,
				msg: fmt.Sprintf("the system still reads %s, not %s, after %s (%s)", last, want, limit.Round(time.Millisecond), source)}
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("driver redfish: node %s: %s: waiting for %s: %w", node.UUID, op, want, ctx.Err())
		}
		pause = min(pause*3/2, 4*d.opts.PowerPollInterval)
	}
}
