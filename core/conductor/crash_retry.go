package conductor

import (
	"context"
	"errors"
	"fmt"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// A driver plugin can die while a call is in flight (host.ErrPluginCrashed);
// the host restarts it. Whether the call reached the BMC is unknown, so
// the conductor repeats it only when repeating is harmless: reads, hard
// power on and power off (setting a state the node may already be in) and
// boot device sets. A reboot, a soft power action or an NMI is never
// repeated: a second reset could cut the boot the first one started.
// For those, the node's power state is read back from the BMC and
// recorded, with a last_error that says what happened.

// safeToRepeat reports whether a power action may be sent again after a
// crash left it unknown whether the first one reached the BMC.
func safeToRepeat(target plugins.PowerState) bool {
	return target == plugins.PowerOn || target == plugins.PowerOff
}

// crashed reports whether err is a plugin crash during the call.
func crashed(err error) bool { return errors.Is(err, host.ErrPluginCrashed) }

// driverCallRepeatable is driverCall for an operation that is safe to
// repeat: when the plugin crashed during it, it runs once more on the
// restarted plugin (within a fresh bound).
func (s *Service) driverCallRepeatable(ctx context.Context, n *objects.Node, op string, fn func(ctx context.Context, pn plugins.Node) error) error {
	err := s.driverCall(ctx, n, op, fn)
	if !crashed(err) || ctx.Err() != nil {
		return err
	}
	s.log.Warn("driver plugin crashed during a call that is safe to repeat; repeating it once on the restarted plugin",
		"node", n.UUID, "driver", n.Driver, "op", op, "error", err)
	if err2 := s.driverCall(ctx, n, op, fn); err2 != nil {
		return fmt.Errorf("%w (repeated once after the plugin crashed)", err2)
	}
	return nil
}

// powerAfterCrash reads the node's power state back after a plugin crash
// interrupted a power action that is not safe to repeat. It returns the
// state read ("" when the read failed too) and the last_error to record,
// which names the action, says it was not repeated, and what the BMC
// reports now.
func (s *Service) powerAfterCrash(ctx context.Context, n *objects.Node, hw Hardware, op string, target plugins.PowerState, cause error) (plugins.PowerState, string) {
	state, err := driverRead(ctx, s, n, "get power state", func(ctx context.Context, pn plugins.Node) (plugins.PowerState, error) {
		return hw.GetPowerState(ctx, pn)
	})
	why := fmt.Sprintf("%s is not repeated automatically (it is not safe to send twice)", target)
	if safeToRepeat(target) {
		why = fmt.Sprintf("%s was repeated once and the plugin crashed again; it is not repeated again", target)
	}
	if err != nil {
		return "", fmt.Sprintf("%v; %s, and reading the power state back failed too: %v", cause, why, err)
	}
	return state, fmt.Sprintf("%v; %s; the BMC now reports %s", cause, why, state)
}
