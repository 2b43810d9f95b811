package api

import (
	"net/http"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/states"
)

// nodePatch are the node fields PATCH may change, in the order of Ironic's
// "Only the following can be updated" message (its PATCH_ALLOWED_FIELDS,
// less the fields Rivet does not have yet); nodeSince gates them.
var nodePatch = patchRules{
	allowed: []string{"automated_clean", "bios_interface", "boot_interface", "chassis_uuid", "conductor_group",
		"console_interface", "deploy_interface", "description", "disable_power_off", "driver", "driver_info",
		"extra", "inspect_interface", "instance_info", "instance_name", "instance_uuid", "lessee", "maintenance",
		"management_interface", "name", "network_interface", "owner", "power_interface", "properties", "protected",
		"protected_reason", "raid_interface", "rescue_interface", "resource_class", "retired", "retired_reason",
		"shard", "storage_interface", "vendor_interface", "parent_node", "firmware_interface"},
	since: nodeSince,
}

// nodeDoc is the unmasked document a node PATCH applies to: every field
// the request's version shows (masking happens only on the way out).
func (s *server) nodeDoc(r *http.Request, n *objects.Node) (map[string]any, error) {
	return s.unmaskedNodeView(r, n, chassisUUIDs{})
}

// patchNode serves PATCH /v1/nodes/{node}: JSON patch, validated here and
// saved by the conductor under the node's lease; 200 with the node.
func (s *server) patchNode(w http.ResponseWriter, r *http.Request) error {
	v := VersionFrom(r.Context())
	resetInterfaces, err := resetInterfacesParam(r)
	if err != nil {
		return err
	}
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	// Only the client's changes travel to the conductor, which applies
	// them to the row as it is under the lease. A row an older release
	// wrote reads back with the fields its conversion filled in marked
	// changed (at their defaults); sent along, they would undo what an
	// online migration wrote since, or be refused on an active node.
	if err := s.reg.ResetChanges(n); err != nil {
		return err
	}
	ops, err := s.readPatch(r)
	if err != nil {
		return err
	}
	if err := authorizeNodePatch(r, n, ops); err != nil {
		return err
	}
	doc, err := s.nodeDoc(r, n)
	if err != nil {
		return err
	}
	if err := nodePatch.check(ops, doc, v); err != nil {
		return err
	}
	if resetInterfaces != nil && !patchSets(ops, "/driver") {
		return errorf(http.StatusBadRequest, "The reset_interfaces parameter can only be used when changing the node's driver.")
	}
	if n.TargetProvisionState != nil && !states.UpdateAllowed[states.State(n.ProvisionState)] {
		return errorf(http.StatusConflict, "Node %s can not be updated while a state transition is in progress.", r.PathValue("node"))
	}
	if err := patchInspectingGate(v, n); err != nil {
		return err
	}
	if err := authorizeOwnerProvisioned(r, n, ops); err != nil {
		return err
	}
	patched, err := applyPatch(r.Context(), doc, ops)
	if err != nil {
		return err
	}
	changed, err := changedAttrs(doc, patched, nodePatch.allowed)
	if err != nil {
		return err
	}
	if len(changed) == 0 {
		return s.writePatchedNode(w, r, n)
	}
	if raw, ok := changed["name"]; ok && !isNull(raw) {
		name, _, err := changed.str("name", true)
		if err != nil {
			return err
		}
		if !validNodeName(*name, v) {
			return errorf(http.StatusBadRequest, "Node %s: Cannot change name to invalid name '%s'", r.PathValue("node"), *name)
		}
	}
	if raw, ok := changed["driver"]; ok && isNull(raw) {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute driver. Value: 'None'. Mandatory field missing.")
	}
	for _, f := range []string{"maintenance"} {
		if raw, ok := changed[f]; ok && isNull(raw) {
			changed[f] = []byte("false")
		}
	}
	hadChassis := n.ChassisID != nil
	if err := s.applyNodeAttrs(r, n, changed); err != nil {
		return err
	}
	if resetInterfaces != nil && *resetInterfaces {
		resetUnpatchedInterfaces(n, changed)
	}
	if hadChassis && n.ChassisID == nil && v.Less(v1_25) {
		return errNotAcceptable() // unsetting chassis_uuid is 1.25
	}
	if !n.Maintenance {
		n.MaintenanceReason = nil
	}
	syncInstanceName(n, changed)
	if err := s.checkNodeUnique(r.Context(), n); err != nil {
		return err
	}
	if err := r.Context().Err(); err != nil {
		return err // the client has gone: the conductor need not act
	}
	stored, err := s.Conductor.UpdateNode(r.Context(), n)
	if err != nil {
		return err
	}
	return s.writePatchedNode(w, r, stored)
}

// writePatchedNode answers a PATCH with the node as GET shows it.
func (s *server) writePatchedNode(w http.ResponseWriter, r *http.Request, n *objects.Node) error {
	view, err := s.nodeView(r, n, chassisUUIDs{})
	if err != nil {
		return err
	}
	if nodeTraitsWanted(r, nil) {
		if err := s.addNodeTraits(r.Context(), []map[string]any{view}, []*objects.Node{n}); err != nil {
			return err
		}
	}
	writeView(w, http.StatusOK, view)
	return nil
}

// syncInstanceName names a node's instance from instance_info's
// display_name when a PATCH changes instance_info and the node has no
// instance_name yet, as Ironic's node PATCH does since instance_name
// (1.104) exists, for clients (Nova) that only set display_name.
func syncInstanceName(n *objects.Node, changed object) {
	if _, ok := changed["instance_info"]; !ok || (n.InstanceName != nil && *n.InstanceName != "") {
		return
	}
	if dn, ok := n.InstanceInfo["display_name"].(string); ok && dn != "" && len(dn) <= 255 {
		n.InstanceName = &dn
	}
}
