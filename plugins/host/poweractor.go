package host

import (
	"context"
	"time"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/internal/wire"
)

// PowerActor performs power actions named by Ironic's targets (PowerOn,
// PowerOff, Rebooting, SoftPowerOff, SoftRebooting), each with an optional
// timeout: the one entry point a conductor needs. Driver and Client
// implement it over the plugin protocol; LocalPowerActor adapts a driver
// value in the same process.
type PowerActor interface {
	// CheckPowerAction reports, without any I/O, whether target with
	// timeout (zero: none asked) can be asked of this driver: nil, or an
	// error wrapping plugins.ErrNotSupported that says why.
	CheckPowerAction(target plugins.PowerState, timeout time.Duration) error
	// PowerAction performs target and returns once the node has reached
	// target.Final(), waiting at most timeout (zero: the driver's default).
	PowerAction(ctx context.Context, node plugins.Node, target plugins.PowerState, timeout time.Duration) error
}

// LocalPowerActor returns the PowerActor of a driver value, deciding as the
// plugin's Power service does: hard actions go to the version 2 methods
// when d implements them and to the version 1 methods otherwise (only
// without a timeout); soft actions need plugins.SoftPowerer on top of power
// interface version 2, as plugins.Describe advertises soft_power.
func LocalPowerActor(d plugins.PowerInterface) PowerActor {
	return wire.LocalPowerActor(d).(PowerActor)
}
