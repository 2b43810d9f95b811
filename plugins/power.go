package plugins

import (
	"context"
	"fmt"
	"time"
)

// PowerState is a node's power state, spelled as Ironic spells it on the
// wire (ironic.common.states).
type PowerState string

// Power states. Drivers report only PowerOn, PowerOff or PowerError from
// GetPowerState. The others are targets of an action, never a current
// state: Rebooting (power interface 1), SoftPowerOff and SoftRebooting
// (power interface 2, capability soft_power).
const (
	PowerOn    PowerState = "power on"
	PowerOff   PowerState = "power off"
	PowerError PowerState = "error"
	// Rebooting is the target of a hard reboot.
	Rebooting PowerState = "rebooting"
	// SoftPowerOff is the target of a soft power off: the node's OS is
	// asked to shut down (an ACPI power button press); the node ends off.
	SoftPowerOff PowerState = "soft power off"
	// SoftRebooting is the target of a soft reboot: the OS is asked to
	// restart; the node ends on.
	SoftRebooting PowerState = "soft rebooting"
)

// Valid reports whether s is a known power state.
func (s PowerState) Valid() bool {
	switch s {
	case PowerOn, PowerOff, PowerError, Rebooting, SoftPowerOff, SoftRebooting:
		return true
	}
	return false
}

// Soft reports whether s is a soft power action's target.
func (s PowerState) Soft() bool { return s == SoftPowerOff || s == SoftRebooting }

// Final is the power state an action targeting s leaves the node in, as
// Ironic's target_power_state: PowerOn for PowerOn and both reboots,
// PowerOff for both power offs, "" for anything else.
func (s PowerState) Final() PowerState {
	switch s {
	case PowerOn, Rebooting, SoftRebooting:
		return PowerOn
	case PowerOff, SoftPowerOff:
		return PowerOff
	}
	return ""
}

// ParsePowerState validates s, as received from the wire.
func ParsePowerState(s string) (PowerState, error) {
	p := PowerState(s)
	if !p.Valid() {
		return "", fmt.Errorf("unknown power state %q", s)
	}
	return p, nil
}

// PowerStateGetter reads a node's current power state from its BMC.
//
// It must not change the node's state, must be safe to call concurrently for
// different nodes, and should return ErrBMCUnreachable (retryable) when the
// BMC does not answer, rather than PowerError, which means the BMC answered
// and reports a fault.
type PowerStateGetter interface {
	GetPowerState(ctx context.Context, node Node) (PowerState, error)
}

// PowerSetter switches a node on or off (a hard power action) and returns
// once the BMC has accepted the request. Setting the state a node already
// has is not an error. target is PowerOn or PowerOff; anything else must be
// rejected with an error wrapping ErrNotSupported.
type PowerSetter interface {
	SetPowerState(ctx context.Context, node Node, target PowerState) error
}

// Rebooter power-cycles a node (a hard reset; a powered-off node is powered
// on) and returns once the BMC has accepted the request.
type Rebooter interface {
	Reboot(ctx context.Context, node Node) error
}

// PowerInterface is the "power" hardware interface at version 1: a driver
// serves it only when it implements all three methods.
type PowerInterface interface {
	PowerStateGetter
	PowerSetter
	Rebooter
}

// TimedPowerSetter is SetPowerState with the caller's timeout (power
// interface version 2): it returns once the node reads target, or fails when
// it does not within timeout. A zero timeout means the driver's own default
// wait (its power_state_change_timeout).
type TimedPowerSetter interface {
	SetPowerStateWithin(ctx context.Context, node Node, target PowerState, timeout time.Duration) error
}

// TimedRebooter is Reboot with the caller's timeout (power interface
// version 2): it returns once the node is on again, or fails when it is not
// within timeout (zero: the driver's default).
type TimedRebooter interface {
	RebootWithin(ctx context.Context, node Node, timeout time.Duration) error
}

// PowerInterfaceV2 is the power interface at version 2: version 1 plus a
// timeout on every action. A driver implementing it is advertised with power
// versions [1 2]; one implementing only PowerInterface with [1].
type PowerInterfaceV2 interface {
	PowerInterface
	TimedPowerSetter
	TimedRebooter
}

// SoftPowerer is capability soft_power, on top of power interface version
// 2. Both methods ask the node's operating system to act (ACPI) and wait for
// the result for at most timeout (zero: the driver's default); neither ever
// substitutes a hard action for a soft one, and hardware that cannot do it
// answers an error wrapping ErrNotSupported.
type SoftPowerer interface {
	// SoftPowerOff asks the OS to shut down and returns once the node is
	// off. A node already off is left alone.
	SoftPowerOff(ctx context.Context, node Node, timeout time.Duration) error
	// SoftReboot asks the OS to restart and returns once the node is on.
	SoftReboot(ctx context.Context, node Node, timeout time.Duration) error
}
