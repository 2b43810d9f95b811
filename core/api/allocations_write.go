package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/pyrepr"
	"github.com/rivetmetal/rivet/db"
)

var allocationPatchable = []string{"name", "extra"}

// createAllocation serves POST /v1/allocations (1.52): validated as
// Ironic's schema, then stored and processed by a conductor, which answers
// at once ("allocating"; clients poll) or, for a backfill (node, 1.58),
// after giving the node.
func (s *server) createAllocation(w http.ResponseWriter, r *http.Request) error {
	if err := allocationsAllowed(r, http.StatusMethodNotAllowed); err != nil {
		return err
	}
	data, err := readBody(r)
	if err != nil {
		return err
	}
	body, msg, err := decodeAllocationBody(data)
	if err != nil {
		return err
	}
	v := VersionFrom(r.Context())
	if msg == "" {
		msg = allocationBodyError(body, v.AtLeast(v1_58))
	}
	if msg != "" {
		return errorf(http.StatusBadRequest, "Schema error: %s", msg)
	}
	if _, ok := body["owner"]; ok && v.Less(v1_60) {
		return errNotAcceptable()
	}
	a := &objects.Allocation{Name: optStr(body["name"]), ResourceClass: optStr(body["resource_class"]),
		Owner: optStr(body["owner"]), Traits: strList(body["traits"]), Extra: map[string]any{}}
	if e, ok := body["extra"].(map[string]any); ok {
		a.Extra = e
	}
	if a.Name != nil && !validLogicalName(*a.Name, v1_10) {
		return errorf(http.StatusBadRequest, "Cannot create allocation with invalid name '%s'", *a.Name)
	}
	if err := authorizeAllocationOwner(r, a); err != nil {
		return err
	}
	var node *objects.Node
	if ident := optStr(body["node"]); ident != nil {
		if node, err = s.getNodeByIdent(r, *ident); err != nil {
			if e, ok := err.(*Error); ok && e.Status == http.StatusNotFound {
				e.Status = http.StatusBadRequest
			}
			return err
		}
		a.NodeID = &node.ID
	}
	if a.ResourceClass == nil || *a.ResourceClass == "" {
		if node == nil {
			return errorf(http.StatusBadRequest, "The resource_class field is mandatory when not backfilling")
		}
		a.ResourceClass = node.ResourceClass
	}
	if cands := strList(body["candidate_nodes"]); len(cands) > 0 {
		if a.CandidateNodes, err = s.candidateUUIDs(r, cands); err != nil {
			return err
		}
	}
	if u := optStr(body["uuid"]); u != nil {
		if !isUUID(*u) {
			return errorf(http.StatusBadRequest, "Expected a UUID but received %s.", *u)
		}
		a.UUID = strings.ToLower(*u)
	} else if node != nil && node.InstanceUUID != nil {
		a.UUID = *node.InstanceUUID // a backfill keeps the instance's UUID
	} else {
		a.UUID = uuid.NewString()
	}
	out, err := s.Conductor.CreateAllocation(r.Context(), a, node)
	if err != nil {
		return err
	}
	view, err := s.allocationView(r, out, s.uuids("Node"))
	if err != nil {
		return err
	}
	w.Header().Set("Location", BaseURL(r)+"/v1/allocations/"+out.UUID)
	writeJSON(w, http.StatusCreated, view)
	return nil
}

// candidateUUIDs resolves candidate node names and UUIDs to UUIDs, in the
// request's order (Ironic's check_node_list): any not found is 400.
func (s *server) candidateUUIDs(r *http.Request, idents []string) ([]string, error) {
	out := make([]string, 0, len(idents))
	var missing []string
	for _, id := range idents {
		n, err := s.Store.GetNode(r.Context(), id)
		if isNotFound(err) {
			if !contains(missing, id) {
				missing = append(missing, id)
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if !canSee(scopeOf(r), n) { // Ironic searches the project's nodes only
			if !contains(missing, id) {
				missing = append(missing, id)
			}
			continue
		}
		out = append(out, n.UUID)
	}
	if len(missing) > 0 {
		return nil, errorf(http.StatusBadRequest, "Nodes cannot be found: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// patchAllocation serves PATCH /v1/allocations/{allocation} (1.57): name
// and extra only; the API writes the DB, as Ironic.
func (s *server) patchAllocation(w http.ResponseWriter, r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_57) {
		return errorf(http.StatusMethodNotAllowed, msgNoAllocationUpdates)
	}
	a, err := s.allocationByIdent(r, r.PathValue("allocation"))
	if err != nil {
		return err
	}
	if err := authorizeAllocation(r, a, policyAllocationUpdate, errAllocationNotFound(r.PathValue("allocation"))); err != nil {
		return err
	}
	ops, err := s.readPatch(r)
	if err != nil {
		return err
	}
	for _, op := range ops {
		if !contains(allocationPatchable, op.root()) {
			return errorf(http.StatusBadRequest, "Cannot patch %s. Only the following can be updated: %s", op.Path, strings.Join(allocationPatchable, ", "))
		}
	}
	// Names are checked on the patch's values first, as Ironic's
	// get_patch_values: anything but a valid name (or null) is refused.
	for _, op := range ops {
		if op.Path != "/name" || op.Op == "remove" || len(op.Value) == 0 || isNull(op.Value) {
			continue
		}
		var name any
		_ = json.Unmarshal(op.Value, &name)
		str, ok := name.(string)
		if !ok {
			str = pyrepr.Value(name)
		}
		if !ok || (str != "" && !validLogicalName(str, v1_10)) {
			return errorf(http.StatusBadRequest, "Cannot update allocation with invalid name '%s'", str)
		}
	}
	doc, err := s.allocationView(r, a, s.uuids("Node"))
	if err != nil {
		return err
	}
	doc["name"], doc["extra"] = strOrNil(a.Name), orEmpty(a.Extra) // unmasked: what the patch applies to
	patched, err := applyPatch(r.Context(), doc, ops)
	if err != nil {
		return err
	}
	changed, err := changedAttrs(doc, patched, allocationPatchable)
	if err != nil {
		return err
	}
	if name, present, err := changed.str("name", true); err != nil {
		return errorf(http.StatusBadRequest, "Schema error for patch: %s is not of type 'string', 'null'", pyrepr.JSON(changed["name"]))
	} else if present {
		a.Name = name
	}
	if m, present, err := changed.dict("extra"); err != nil {
		return errorf(http.StatusBadRequest, "Schema error for patch: %s is not of type 'object', 'null'", pyrepr.JSON(changed["extra"]))
	} else if present {
		a.Extra = m
	}
	if len(changed) > 0 {
		if err := s.Store.Save(r.Context(), a); err != nil {
			if db.IsUniqueViolation(err) && a.Name != nil {
				return errorf(http.StatusConflict, "An allocation with name %s already exists.", *a.Name)
			}
			return err
		}
	}
	view, err := s.allocationView(r, a, s.uuids("Node"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view)
	return nil
}

// deleteAllocation serves DELETE /v1/allocations/{allocation} (1.52).
func (s *server) deleteAllocation(w http.ResponseWriter, r *http.Request) error {
	if err := allocationsAllowed(r, http.StatusMethodNotAllowed); err != nil {
		return err
	}
	a, err := s.allocationByIdent(r, r.PathValue("allocation"))
	if err != nil {
		return err
	}
	if err := authorizeAllocation(r, a, policyAllocationDelete, errAllocationNotFound(r.PathValue("allocation"))); err != nil {
		return err
	}
	return s.destroyAllocation(w, r, a)
}

// destroyAllocation has a conductor delete a and free its node (refused,
// 409, while the node is active or busy and not in maintenance).
func (s *server) destroyAllocation(w http.ResponseWriter, r *http.Request, a *objects.Allocation) error {
	var node *objects.Node
	if a.NodeID != nil {
		n, err := s.nodeByID(r.Context(), *a.NodeID)
		if err != nil && !isNotFound(err) {
			return err
		}
		node = n
	}
	if err := s.Conductor.DestroyAllocation(r.Context(), a, node); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
