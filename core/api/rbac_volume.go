package api

import (
	"net/http"

	"github.com/rivetmetal/rivet/core/htpasswd"
	"github.com/rivetmetal/rivet/core/objects"
)

// Ironic's volume rules (common/policy.py), over the node of the
// connector or target.
var (
	systemMemberOrOwnerLesseeAdmin = anyOf(systemMember, ownerRole(htpasswd.Admin), lesseeRole(htpasswd.Admin))

	policyVolumeGet    = policy{"baremetal:volume:get", systemOrProjectReader}
	policyVolumeCreate = policy{"baremetal:volume:create", systemMemberOrOwnerLesseeAdmin}
	policyVolumeUpdate = policy{"baremetal:volume:update", systemOrOwnerMemberLesseeAdmn}
	policyVolumeDelete = policy{"baremetal:volume:delete", systemMemberOrOwnerLesseeAdmin}
	// baremetal:volume:view_target_properties: the system reader or any
	// admin; others read a target's properties redacted.
	targetPropertiesReader = func(sc *htpasswd.Scope, _, _ string) bool { return sc.System() || sc.Role >= htpasswd.Admin }
)

// redactedTargetProperties is what Ironic shows for a volume target's
// properties to a user without baremetal:volume:view_target_properties
// (they may hold iSCSI credentials).
var redactedTargetProperties = map[string]any{"redacted_contents": "** Value redacted: Requires permission " +
	"baremetal:volume:view_target_properties access. Permission denied. **"}

// authorizeVolume applies p to a connector or target for the request: one
// on a node the request may not see is not found (Ironic's
// check_volume_policy_and_retrieve), then p is 403.
func (s *server) authorizeVolume(r *http.Request, k *volumeKind, obj objects.Object, p policy) error {
	sc := scopeOf(r)
	if sc == nil {
		return nil
	}
	n, err := s.nodeByID(r.Context(), *k.nodeID(obj))
	if err != nil && !isNotFound(err) {
		return err
	}
	owner, lessee := "", ""
	if n != nil {
		owner, lessee = strOf(n.Owner), strOf(n.Lessee)
	}
	if !policyNodeGet.allow(sc, owner, lessee) {
		return k.notFound(r.PathValue("id"))
	}
	if !p.allow(sc, owner, lessee) {
		return errForbidden(p)
	}
	return nil
}

// authorizeVolumeCreate is baremetal:volume:create on the node a new
// connector or target names (nil when it does not exist): checked before
// the node's existence, as Ironic's post does, so a project-scoped user
// learns nothing of nodes it cannot see.
func authorizeVolumeCreate(r *http.Request, n *objects.Node) error {
	sc := scopeOf(r)
	if sc == nil || systemMember(sc, "", "") {
		return nil
	}
	if n == nil || !policyVolumeCreate.allow(sc, strOf(n.Owner), strOf(n.Lessee)) {
		return errForbidden(policyVolumeCreate)
	}
	return nil
}

// authorizeVolumeRoot is baremetal:volume:get on /v1/volume and
// /v1/nodes/{node}/volume, which Ironic checks with no node: only the
// system passes.
func authorizeVolumeRoot(r *http.Request) error {
	if sc := scopeOf(r); sc != nil && !systemReader(sc, "", "") {
		return errForbidden(policyVolumeGet)
	}
	return nil
}

// redactVolumeView hides a target's properties from a user without
// baremetal:volume:view_target_properties.
func redactVolumeView(r *http.Request, k *volumeKind, view map[string]any) {
	if k != volumeTargets {
		return
	}
	if sc := scopeOf(r); sc != nil && !targetPropertiesReader(sc, "", "") {
		if _, ok := view["properties"]; ok {
			view["properties"] = redactedTargetProperties
		}
	}
}
