package redfish

import (
	"fmt"
	"slices"

	"github.com/stmcginnis/gofish/schemas"

	"github.com/rivetmetal/rivet/plugins"
)

// action is something the driver asks of ComputerSystem.Reset.
type action string

const (
	actOn          action = "power on"
	actOff         action = "power off"
	actRestart     action = "restart"
	actSoftOff     action = "graceful shutdown"
	actSoftRestart action = "graceful restart"
	actNMI         action = "NMI"
)

// resetChoices lists, per action, the ResetTypes that perform it, best
// first. Basic power actions fall back to the standard value when a system
// advertises no allowable values at all (gofish then sends it unchecked,
// as every BMC implements it); the optional ones are used only when the
// system advertises them — never guessed.
var resetChoices = map[action]struct {
	types          []schemas.ResetType
	advertisedOnly bool
}{
	actOn:          {[]schemas.ResetType{schemas.OnResetType, schemas.ForceOnResetType}, false},
	actOff:         {[]schemas.ResetType{schemas.ForceOffResetType}, false},
	actRestart:     {[]schemas.ResetType{schemas.ForceRestartResetType}, false},
	actSoftOff:     {[]schemas.ResetType{schemas.GracefulShutdownResetType}, true},
	actSoftRestart: {[]schemas.ResetType{schemas.GracefulRestartResetType}, true},
	actNMI:         {[]schemas.ResetType{schemas.NmiResetType}, true},
}

// resetType picks the ResetType for act from what sys advertises
// (ResetType@Redfish.AllowableValues, or its ActionInfo).
func resetType(sys *schemas.ComputerSystem, act action) (schemas.ResetType, error) {
	choice := resetChoices[act]
	allowed, err := sys.GetSupportedResetTypes()
	if err != nil {
		allowed = nil // an unreadable ActionInfo advertises nothing
	}
	if len(allowed) == 0 && !choice.advertisedOnly {
		return choice.types[0], nil
	}
	for _, t := range choice.types {
		if slices.Contains(allowed, t) {
			return t, nil
		}
	}
	return "", fmt.Errorf("%s: the system allows reset types %v, none of %v: %w",
		act, allowed, choice.types, plugins.ErrNotSupported)
}

// supports reports whether sys advertises a ResetType for act.
func supports(sys *schemas.ComputerSystem, act action) bool {
	_, err := resetType(sys, act)
	return err == nil
}

// reset performs act on sys.
func reset(sys *schemas.ComputerSystem, act action) error {
	rt, err := resetType(sys, act)
	if err != nil {
		return err
	}
	_, err = sys.Reset(rt) // on 412 gofish retries once without If-Match
	return err
}
