package api

import (
	"net/http"
	"slices"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/uptrace/bun"
)

// Microversions of allocations (Ironic's MINOR_52, 57, 58, 60, 79).
var (
	v1_52 = version.Version{Major: 1, Minor: 52} // allocations, node allocation_uuid
	v1_57 = version.Version{Major: 1, Minor: 57} // PATCH name and extra
	v1_58 = version.Version{Major: 1, Minor: 58} // backfill: POST with node
	v1_60 = version.Version{Major: 1, Minor: 60} // owner
)

// allocationFields are an allocation's API fields; owner is 1.60.
var allocationFields = []string{"uuid", "candidate_nodes", "created_at", "extra", "last_error", "links", "name",
	"node_uuid", "owner", "resource_class", "state", "traits", "updated_at"}

var allocationSince = gated{"owner": v1_60}

const (
	msgNoAllocations       = "The API version does not allow allocations"
	msgNoAllocationUpdates = "The API version does not allow updating allocations"
)

func errAllocationNotFound(ident string) error {
	return errorf(http.StatusNotFound, "Allocation %s could not be found.", ident)
}

// allocationsAllowed answers below 1.52 as Ironic's api_version check:
// 404 for reads, 405 for writes.
func allocationsAllowed(r *http.Request, status int) error {
	if VersionFrom(r.Context()).Less(v1_52) {
		return errorf(status, msgNoAllocations)
	}
	return nil
}

// allocationView is an allocation as Ironic shows it: node_uuid from its
// node (null once the node is gone), owner from 1.60.
func (s *server) allocationView(r *http.Request, a *objects.Allocation, nodes *uuidCache) (map[string]any, error) {
	nodeUUID, err := nodes.get(r.Context(), a.NodeID)
	if err != nil {
		return nil, err
	}
	view := map[string]any{
		"uuid": a.UUID, "created_at": isoTime(a.CreatedAt), "updated_at": isoTimePtr(a.UpdatedAt),
		"links": resourceLinks(r, "allocations", a.UUID), "name": strOrNil(a.Name), "node_uuid": nodeUUID,
		"state": a.State, "last_error": strOrNil(a.LastError), "resource_class": strOrNil(a.ResourceClass),
		"traits": orEmptyList(a.Traits), "candidate_nodes": orEmptyList(a.CandidateNodes), "extra": orEmpty(a.Extra),
		"owner": strOrNil(a.Owner),
	}
	allocationSince.hide(view, VersionFrom(r.Context()))
	return maskView(view), nil
}

func orEmptyList(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// allocationByIdent loads an allocation by UUID or name (Ironic's
// get_rpc_allocation): anything else is 400.
func (s *server) allocationByIdent(r *http.Request, ident string) (*objects.Allocation, error) {
	if !isUUID(ident) && !validLogicalName(ident, v1_10) {
		return nil, errorf(http.StatusBadRequest, "Expected a logical name or UUID but received %s.", ident)
	}
	a, err := s.Store.GetAllocation(r.Context(), ident)
	if isNotFound(err) {
		return nil, errAllocationNotFound(ident)
	}
	return a, err
}

// allocationFieldsParam reads ?fields of an allocation request; owner
// below 1.60 is 406.
func allocationFieldsParam(r *http.Request) ([]string, error) {
	return parseFields(r, allocationFields, allocationSince)
}

// listAllocations serves GET /v1/allocations (1.52): filters node,
// resource_class, state and owner (1.60).
func (s *server) listAllocations(w http.ResponseWriter, r *http.Request) error {
	if err := allocationsAllowed(r, http.StatusNotFound); err != nil {
		return err
	}
	projectOwner, err := allocationListOwner(r)
	if err != nil {
		return err
	}
	fields, err := allocationFieldsParam(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	if q.Has("owner") && VersionFrom(r.Context()).Less(v1_60) {
		return errNotAcceptable()
	}
	if k := q.Get("sort_key"); slices.Contains([]string{"extra", "candidate_nodes", "traits"}, k) {
		return errorf(http.StatusBadRequest, "The sort_key value %s is an invalid field for sorting", k)
	}
	pg, err := s.parsePage(r, "Allocation")
	if err != nil {
		return err
	}
	var conds []func(*bun.SelectQuery) *bun.SelectQuery
	if ident := q.Get("node"); q.Has("node") {
		n, err := s.getNodeByIdent(r, ident)
		if err != nil {
			if e, ok := err.(*Error); ok && e.Status == http.StatusNotFound {
				e.Status = http.StatusBadRequest // Ironic changes the code the same way
			}
			return err
		}
		conds = append(conds, eq("node_id", n.ID))
	}
	for _, col := range []string{"resource_class", "state", "owner"} {
		if q.Has(col) {
			conds = append(conds, eq(col, q.Get(col)))
		}
	}
	if projectOwner != "" {
		conds = append(conds, eq("owner", projectOwner))
	}
	objs, err := s.loadPage(r.Context(), "Allocation", pg, all(conds), errAllocationNotFound)
	if err != nil {
		return err
	}
	return s.writeAllocations(w, r, objs, fields, pg)
}

func (s *server) writeAllocations(w http.ResponseWriter, r *http.Request, objs []objects.Object, fields []string, pg page) error {
	nodes := s.uuids("Node")
	items, last := []map[string]any{}, ""
	for _, o := range objs {
		a := o.(*objects.Allocation)
		view, err := s.allocationView(r, a, nodes)
		if err != nil {
			return err
		}
		items, last = append(items, selectFields(view, fields)), a.UUID
	}
	writeCollection(w, "allocations", items, nextURL(r, pg, len(objs), last))
	return nil
}

// getAllocation serves GET /v1/allocations/{allocation} (1.52).
func (s *server) getAllocation(w http.ResponseWriter, r *http.Request) error {
	if err := allocationsAllowed(r, http.StatusNotFound); err != nil {
		return err
	}
	a, err := s.allocationByIdent(r, r.PathValue("allocation"))
	if err != nil {
		return err
	}
	if err := authorizeAllocation(r, a, policyAllocationGet, errAllocationNotFound(r.PathValue("allocation"))); err != nil {
		return err
	}
	fields, err := allocationFieldsParam(r)
	if err != nil {
		return err
	}
	view, err := s.allocationView(r, a, s.uuids("Node"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, selectFields(view, fields))
	return nil
}

// nodeAllocation finds the allocation of the node in the path for
// /v1/nodes/{node}/allocation; below 1.52 the path does not exist
// (Ironic answers from its router: the webob body, written here).
func (s *server) nodeAllocation(w http.ResponseWriter, r *http.Request, nodeNotFound int) (*objects.Allocation, bool, error) {
	if VersionFrom(r.Context()).Less(v1_52) {
		writeRoutingError(w, http.StatusNotFound, msgNoAllocations)
		return nil, false, nil
	}
	ident := r.PathValue("node")
	n, err := s.getNodeByIdent(r, ident)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Status == http.StatusNotFound {
			e.Status = nodeNotFound
		}
		return nil, false, err
	}
	objs, err := s.Store.LoadAll(r.Context(), "Allocation", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.node_id = ?", n.ID).OrderExpr("?TableAlias.id ASC").Limit(1)
	})
	if err != nil {
		return nil, false, err
	}
	if len(objs) == 0 {
		return nil, false, errorf(http.StatusNotFound, "Allocation for node %s was not found", ident)
	}
	return objs[0].(*objects.Allocation), true, nil
}

// getNodeAllocation serves GET /v1/nodes/{node}/allocation (1.52); an
// unknown node is 400, as Ironic's shared collection code answers.
func (s *server) getNodeAllocation(w http.ResponseWriter, r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_52) {
		writeRoutingError(w, http.StatusNotFound, msgNoAllocations)
		return nil
	}
	fields, err := allocationFieldsParam(r)
	if err != nil {
		return err
	}
	a, ok, err := s.nodeAllocation(w, r, http.StatusBadRequest)
	if !ok || err != nil {
		return err
	}
	if err := authorizeAllocation(r, a, policyAllocationGet, nil); err != nil {
		return err
	}
	view, err := s.allocationView(r, a, s.uuids("Node"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, selectFields(view, fields))
	return nil
}

// deleteNodeAllocation serves DELETE /v1/nodes/{node}/allocation (1.52).
func (s *server) deleteNodeAllocation(w http.ResponseWriter, r *http.Request) error {
	a, ok, err := s.nodeAllocation(w, r, http.StatusNotFound)
	if !ok || err != nil {
		return err
	}
	if err := authorizeAllocation(r, a, policyAllocationDelete, nil); err != nil {
		return err
	}
	return s.destroyAllocation(w, r, a)
}
