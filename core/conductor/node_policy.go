package conductor

import (
	"net/http"
	"slices"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/states"
)

// The node fields of API 1.42-1.95 the conductor acts on (Node 1.2):
// automated_clean, protected, retired, fault and disable_power_off, with
// Ironic's rules and messages.

// automatedClean reports whether cleaning runs its automated steps for n:
// the node's automated_clean when set, else [conductor] automated_clean
// (Ironic's skip_automated_cleaning).
func (s *Service) automatedClean(n *objects.Node) bool {
	if n.AutomatedClean != nil {
		return *n.AutomatedClean
	}
	return s.cfg.AutomatedClean
}

// errProtected is Ironic's NodeProtected (403).
func errProtected(n *objects.Node) error {
	return classed("NodeProtected", http.StatusForbidden, nil,
		"Node %s is protected and cannot be undeployed, rebuilt or deleted", n.UUID)
}

// errRetired is Ironic's NodeIsRetired (400).
func errRetired(op string, n *objects.Node) error {
	return classed("NodeIsRetired", http.StatusBadRequest, nil,
		"The %s operation can't be performed on node %s because it is retired.", op, n.UUID)
}

// errPowerOffDisabled is Ironic's PowerStateFailure for a power-off of a
// node with disable_power_off (its conductor refuses it, 500 in Ironic;
// 409 here, since the node's own setting refuses it and it is no server
// fault).
func errPowerOffDisabled(target string) error {
	return classed("PowerStateFailure", http.StatusConflict, nil,
		"Failed to set node power state to %s.", target)
}

// checkUpdatePolicy is update_node's checks of protected and retired
// (Ironic's _check_update_protected and _check_update_retired) and its
// clearing of maintenance_reason and fault when maintenance ends.
func checkUpdatePolicy(n *objects.Node, applied []string) error {
	has := func(f string) bool { return slices.Contains(applied, f) }
	if has("maintenance") && !n.Maintenance {
		n.MaintenanceReason, n.Fault = nil, nil
	}
	if has("protected") {
		st := states.State(n.ProvisionState)
		switch {
		case !n.Protected:
			n.ProtectedReason = nil
		case st != states.Active && st != states.Rescue:
			return errInvalidState("Node %s can only be made protected in provision states 'active' or 'rescue', the current state is '%s'", n.UUID, st)
		}
	}
	if has("protected_reason") && n.ProtectedReason != nil && *n.ProtectedReason != "" && !n.Protected {
		return errInvalidParameter("The protected_reason field can only be set when protected is True")
	}
	if has("retired") {
		switch {
		case !n.Retired:
			n.RetiredReason = nil
		case n.ProvisionState == string(states.Available):
			return errInvalidState("Node %s can not have 'retired' set in provision state 'available', the current state is '%s'", n.UUID, n.ProvisionState)
		}
	}
	if has("retired_reason") && n.RetiredReason != nil && *n.RetiredReason != "" && !n.Retired {
		return errInvalidParameter("The retired_reason field can only be set when retired is True")
	}
	return nil
}
