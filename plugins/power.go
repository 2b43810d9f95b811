package plugins

import (
	"context"
	"fmt"
)

// PowerState is a node's power state, spelled as Ironic spells it on the
// wire (ironic.common.states).
type PowerState string

// Power states. Drivers report only PowerOn, PowerOff or PowerError from
// GetPowerState; SetPowerState accepts PowerOn and PowerOff (soft power
// states arrive with a later protocol version as a negotiated addition).
const (
	PowerOn    PowerState = "power on"
	PowerOff   PowerState = "power off"
	PowerError PowerState = "error"
	// Rebooting is the target state while a reboot is in progress; it is
	// never a current state.
	Rebooting PowerState = "rebooting"
)

// Valid reports whether s is a known power state.
func (s PowerState) Valid() bool {
	switch s {
	case PowerOn, PowerOff, PowerError, Rebooting:
		return true
	}
	return false
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

// PowerInterface is the "power" hardware interface: a driver serves it only
// when it implements all three methods.
type PowerInterface interface {
	PowerStateGetter
	PowerSetter
	Rebooter
}
