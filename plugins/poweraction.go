package plugins

import (
	"context"
	"fmt"
	"time"
)

// localPower performs power actions on a driver value in the same
// process: the plugin's Power service (server_power.go) and, through
// wire.LocalPowerActor, plugins/host's LocalPowerActor. Hard actions go to
// the version 2 methods when d implements them and to the version 1 methods
// otherwise (only without a timeout); soft actions need SoftPowerer on top
// of power interface version 2, as Describe advertises soft_power.
type localPower struct{ d PowerInterface }

func (l localPower) CheckPowerAction(target PowerState, timeout time.Duration) error {
	if target.Final() == "" {
		return fmt.Errorf("power action %q: %w", target, ErrNotSupported)
	}
	if timeout < 0 {
		return fmt.Errorf("power action %q: negative timeout %v", target, timeout)
	}
	_, v2 := l.d.(PowerInterfaceV2)
	_, soft := l.d.(SoftPowerer)
	switch {
	case target.Soft() && !(v2 && soft):
		return fmt.Errorf("%s: the driver has no soft power (power interface version 2 with SoftPowerOff and SoftReboot): %w", target, ErrNotSupported)
	case timeout > 0 && !v2:
		return fmt.Errorf("%s with a timeout: the driver has no power timeouts (power interface version 2): %w", target, ErrNotSupported)
	}
	return nil
}

func (l localPower) PowerAction(ctx context.Context, node Node, target PowerState, timeout time.Duration) error {
	if err := l.CheckPowerAction(target, timeout); err != nil {
		return err
	}
	v2, isV2 := l.d.(PowerInterfaceV2)
	switch target {
	case SoftPowerOff:
		return l.d.(SoftPowerer).SoftPowerOff(ctx, node, timeout)
	case SoftRebooting:
		return l.d.(SoftPowerer).SoftReboot(ctx, node, timeout)
	case Rebooting:
		if isV2 {
			return v2.RebootWithin(ctx, node, timeout)
		}
		return l.d.Reboot(ctx, node)
	}
	if isV2 {
		return v2.SetPowerStateWithin(ctx, node, target, timeout)
	}
	return l.d.SetPowerState(ctx, node, target)
}
