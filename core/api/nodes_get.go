package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/uptrace/bun"
)

// nodeFilter is a node list query parameter and the version it needs.
type nodeFilter struct {
	name  string
	since version.Version
}

// listNodes serves GET /v1/nodes and /v1/nodes/detail with Ironic's
// filters: associated, maintenance, instance_uuid, chassis_uuid,
// provision_state (1.9), driver (1.16), resource_class (1.21), owner
// (1.50), lessee (1.65).
func (s *server) listNodes(detail bool) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		return s.writeNodes(w, r, detail, nil)
	}
}

// writeNodes lists nodes, optionally within a chassis (chassisID).
func (s *server) writeNodes(w http.ResponseWriter, r *http.Request, detail bool, chassisID *int64) error {
	v := VersionFrom(r.Context())
	q := r.URL.Query()
	var fields []string
	if !detail {
		var err error
		if fields, detail, err = parseListFields(r, nodeFields, nodeSince); err != nil {
			return err
		}
	}
	// A sort key newer than the request is 406, as Ironic's
	// check_allowed_fields([sort_key]).
	if since, ok := nodeSince[q.Get("sort_key")]; ok && v.Less(since) {
		return errNotAcceptable()
	}
	if q.Has("provision_state") && v.Less(v1_9) {
		return errNotAcceptable()
	}
	for _, f := range []nodeFilter{{"driver", v1_16}, {"resource_class", v1_21}, {"owner", v1_50}, {"lessee", v1_65}} {
		if q.Has(f.name) && v.Less(f.since) {
			return errorf(http.StatusNotAcceptable, "Request not acceptable. The minimal required API version should be %s", f.since)
		}
	}
	if err := checkNodeFilters03(r); err != nil {
		return err
	}
	where, err := s.nodeWhere(r, chassisID)
	if err != nil {
		return err
	}
	pg, err := s.parsePage(r, "Node")
	if err != nil {
		return err
	}
	query, err := s.pageQuery(r.Context(), "Node", pg, where, func(m string) error { return errNodeNotFound(m) })
	if err != nil {
		return err
	}
	conductor, byConductor := q.Get("conductor"), q.Has("conductor")
	if !detail && !s.slowNodeList && !byConductor && scopeOf(r) == nil {
		if fast, ok := s.nodeFastFields(v, fields); ok {
			if done, err := s.writeNodesFast(r.Context(), w, r, v, fast, pg, query); done || err != nil {
				return err
			}
		}
	}
	traits := (detail || fields != nil) && nodeTraitsWanted(r, fields)
	var plan []streamField
	var keep func(field, doc string) bool
	if !s.slowNodeList {
		plan = s.nodeStreamFields(v, fields, detail, traits)
		keep = rawNodeDocuments(plan)
	}
	listed, err := s.Store.ListNodes(r.Context(), query, keep)
	if err != nil {
		return err
	}
	objs := make([]*objects.Node, len(listed))
	for i, n := range listed {
		objs[i] = n.Node
	}
	// The next link follows the last node read, kept or not, so ?conductor=
	// (filtered after the query, as Ironic does) pages on.
	lastRead := ""
	if len(objs) > 0 {
		lastRead = objs[len(objs)-1].UUID
	}
	read := len(objs)
	if byConductor {
		objs = s.filterByConductor(r.Context(), objs, conductor)
		listed = keptNodes(listed, objs)
	}
	if !s.slowNodeList {
		last := lastRead
		if len(objs) > 0 && !byConductor {
			last = objs[len(objs)-1].UUID
		}
		return s.writeNodesStreamed(w, r, listed, plan, nextURL(r, pg, read, last))
	}
	cache := chassisUUIDs{}
	items := make([]map[string]any, 0, len(objs))
	nodes := make([]*objects.Node, 0, len(objs))
	last := ""
	for _, n := range objs {
		view, err := s.nodeView(r, n, cache)
		if err != nil {
			return err
		}
		switch {
		case fields != nil:
			view = selectFields(view, fields)
		case !detail:
			view = selectFields(view, nodeListFields)
		}
		items, nodes = append(items, view), append(nodes, n)
		last = n.UUID
	}
	if byConductor {
		last = lastRead
	}
	if traits {
		if err := s.addNodeTraits(r.Context(), items, nodes); err != nil {
			return err
		}
	}
	writeCollection(w, "nodes", items, nextURL(r, pg, read, last))
	return nil
}

// nodeWhere builds the list filter from the query.
func (s *server) nodeWhere(r *http.Request, chassisID *int64) (func(*bun.SelectQuery) *bun.SelectQuery, error) {
	q := r.URL.Query()
	var conds []func(*bun.SelectQuery) *bun.SelectQuery
	add := func(c func(*bun.SelectQuery) *bun.SelectQuery) { conds = append(conds, c) }
	if chassisID != nil {
		id := *chassisID
		add(func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.chassis_id = ?", id) })
	}
	for _, name := range []string{"associated", "maintenance"} {
		if !q.Has(name) {
			continue
		}
		b, err := parseBool(name, q.Get(name))
		if err != nil {
			return nil, err
		}
		switch name {
		case "associated":
			op := "IS NULL"
			if b {
				op = "IS NOT NULL"
			}
			add(func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.instance_uuid " + op) })
		case "maintenance":
			add(func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.maintenance = ?", b) })
		}
	}
	if ps := q.Get("provision_state"); q.Has("provision_state") {
		if !validState(ps) {
			return nil, errorf(http.StatusBadRequest, "Provision state \"%s\" is not valid", ps)
		}
	}
	for _, col := range []string{"instance_uuid", "provision_state", "driver", "resource_class", "owner", "lessee"} {
		if val := q.Get(col); q.Has(col) {
			add(func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.? = ?", bun.Ident(col), val) })
		}
	}
	if only := projectNodes(r); only != nil {
		add(only)
	}
	if cu := q.Get("chassis_uuid"); q.Has("chassis_uuid") {
		ch, err := s.getChassisByUUID(r, cu)
		if err != nil {
			return nil, err
		}
		add(func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.chassis_id = ?", ch.ID) })
	}
	if err := s.nodeWhere03(r, add); err != nil {
		return nil, err
	}
	return func(q *bun.SelectQuery) *bun.SelectQuery {
		for _, c := range conds {
			q = c(q)
		}
		return q
	}, nil
}

func validState(s string) bool {
	for _, st := range states.AllStates {
		if string(st) == s {
			return true
		}
	}
	return false
}

// parseBool accepts what oslo's bool_from_string strict mode accepts.
func parseBool(name, s string) (bool, error) {
	switch strings.ToLower(s) {
	case "1", "t", "true", "on", "y", "yes":
		return true, nil
	case "0", "f", "false", "off", "n", "no":
		return false, nil
	}
	if b, err := strconv.ParseBool(s); err == nil {
		return b, nil
	}
	return false, errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: '%s'. Wrong type. Expected 'bool'", name, s)
}

// getNode serves GET /v1/nodes/{node}, with ?fields from 1.8.
func (s *server) getNode(w http.ResponseWriter, r *http.Request) error {
	fields, err := parseFields(r, nodeFields, nodeSince)
	if err != nil {
		return err
	}
	withTraits := nodeTraitsWanted(r, fields)
	n, traits, err := s.nodeByIdent(r, r.PathValue("node"), withTraits)
	if err != nil {
		return err
	}
	view, err := s.nodeView(r, n, chassisUUIDs{})
	if err != nil {
		return err
	}
	view = selectFields(view, fields)
	if withTraits {
		view["traits"] = traits
	}
	writeView(w, http.StatusOK, view)
	return nil
}

// keptNodes returns the nodes of listed that are in kept, a subsequence of
// their nodes.
func keptNodes(listed []db.ListedNode, kept []*objects.Node) []db.ListedNode {
	out := make([]db.ListedNode, 0, len(kept))
	for _, n := range listed {
		if len(out) < len(kept) && kept[len(out)] == n.Node {
			out = append(out, n)
		}
	}
	return out
}
