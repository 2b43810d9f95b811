package api

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/core/objects"
)

// portgroupFields are the portgroup's API fields up to 1.26 (portgroups
// are 1.23).
var portgroupFields = []string{"uuid", "name", "address", "node_uuid", "extra", "internal_info",
	"standalone_ports_supported", "created_at", "updated_at", "links", "ports", "mode", "properties",
	"physical_network", "category"}

// portgroupSince is the portgroup gating table.
var portgroupSince = gated{"mode": v1_26, "properties": v1_26, "physical_network": v1_102, "category": v1_103}

var portgroupListFields = []string{"uuid", "address", "name", "links"}

var portgroupList = listPage{kind: "Portgroup", collection: "portgroups", fields: portgroupFields,
	listFields: portgroupListFields, since: portgroupSince, notFound: errPortgroupNotFound}

var portgroupPatch = patchRules{
	allowed: []string{"address", "extra", "mode", "name", "node_uuid", "properties", "standalone_ports_supported",
		"physical_network", "category"},
	since: portgroupSince,
}

// defaultPortgroupMode is Ironic's [DEFAULT] default_portgroup_mode.
const defaultPortgroupMode = "active-backup"

// portgroupView is the portgroup as Ironic shows it at the request's
// version, with secrets masked.
func (s *server) portgroupView(r *http.Request, pg *objects.Portgroup, nodes *uuidCache) (map[string]any, error) {
	view, err := s.unmaskedPortgroupView(r, pg, nodes)
	if err != nil {
		return nil, err
	}
	return maskView(view), nil
}

// unmaskedPortgroupView is portgroupView before masking: the document a
// PATCH applies to.
func (s *server) unmaskedPortgroupView(r *http.Request, pg *objects.Portgroup, nodes *uuidCache) (map[string]any, error) {
	nodeID := pg.NodeID
	nu, err := nodes.get(r.Context(), &nodeID)
	if err != nil {
		return nil, err
	}
	view := map[string]any{
		"uuid": pg.UUID, "name": strOrNil(pg.Name), "address": strOrNil(pg.Address), "node_uuid": nu,
		"extra": orEmpty(pg.Extra), "internal_info": orEmpty(pg.InternalInfo),
		"standalone_ports_supported": pg.StandalonePortsSupported,
		"created_at":                 isoTime(pg.CreatedAt), "updated_at": isoTimePtr(pg.UpdatedAt),
		"links": resourceLinks(r, "portgroups", pg.UUID), "ports": resourceLinks(r, "portgroups", pg.UUID+"/ports"),
		"mode": strOrNil(pg.Mode), "properties": orEmpty(pg.Properties),
		"physical_network": strOrNil(pg.PhysicalNetwork), "category": strOrNil(pg.Category),
	}
	portgroupSince.hide(view, VersionFrom(r.Context()))
	s.hideUnpinned(view, "Portgroup")
	return view, nil
}

// portgroupByIdent finds a portgroup by UUID or name.
func (s *server) portgroupByIdent(r *http.Request, ident string) (*objects.Portgroup, error) {
	col := "uuid"
	if !isUUID(ident) {
		col = "name"
	}
	obj, err := s.Store.Load(r.Context(), "Portgroup", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.? = ?", bun.Ident(col), ident)
	})
	if isNotFound(err) {
		return nil, errPortgroupNotFound(ident)
	}
	if err != nil {
		return nil, err
	}
	g := obj.(*objects.Portgroup)
	if err := s.authorizeByNodeID(r, g.NodeID, errPortgroupNotFound(ident)); err != nil {
		return nil, err
	}
	return g, nil
}

// portgroupsAllowed answers 404 below 1.23, as Ironic for a newer resource.
func portgroupsAllowed(r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_23) {
		return errorf(http.StatusNotFound, msgNotFound)
	}
	return nil
}

// listPortgroups serves /v1/portgroups (filters node, address, shard
// 1.106, conductor_groups 1.99; one at a time) and
// /v1/nodes/{node}/portgroups (1.24).
func (s *server) listPortgroups(detail, underNode bool) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := portgroupsAllowed(r); err != nil {
			return err
		}
		v := VersionFrom(r.Context())
		q := r.URL.Query()
		var conds []func(*bun.SelectQuery) *bun.SelectQuery
		nodeIdent := q.Get("node")
		if underNode {
			if v.Less(v1_24) {
				return errorf(http.StatusNotFound, msgNotFound)
			}
			nodeIdent = r.PathValue("node")
		}
		if addr := q.Get("address"); addr != "" {
			if _, err := addressFilter(addr, nil); err != nil {
				return err
			}
		}
		shards, err := shardList(r, v1_106)
		if err != nil {
			return err
		}
		cg, err := conductorGroupsFilter(r, false, "")
		if err != nil {
			return err
		}
		// A node, an address, shards and conductor groups are exclusive
		// (Ironic's _get_portgroups_collection).
		if countGiven(nodeIdent != "", q.Get("address") != "", len(shards) > 0, cg != nil) > 1 {
			return errorf(http.StatusBadRequest, "Filtering by node, address, or shard simultaneously is not supported.")
		}
		switch {
		case nodeIdent != "":
			n, err := s.getNodeByIdent(r, nodeIdent)
			if err != nil {
				return err
			}
			conds = append(conds, eq("node_id", n.ID))
		case q.Get("address") != "":
			conds, _ = addressFilter(q.Get("address"), conds)
		case len(shards) > 0:
			conds = append(conds, inShards(shards))
		case cg != nil:
			conds = append(conds, cg)
		}
		if only := projectChildren(r); only != nil {
			conds = append(conds, only)
		}
		nodes := s.uuids("Node")
		return s.servePage(w, r, portgroupList, detail, all(conds), func(o objects.Object) (map[string]any, string, error) {
			g := o.(*objects.Portgroup)
			view, err := s.portgroupView(r, g, nodes)
			return view, g.UUID, err
		})
	}
}

// getPortgroup serves GET /v1/portgroups/{pg}.
func (s *server) getPortgroup(w http.ResponseWriter, r *http.Request) error {
	if err := portgroupsAllowed(r); err != nil {
		return err
	}
	fields, err := parseFields(r, portgroupFields, portgroupSince)
	if err != nil {
		return err
	}
	g, err := s.portgroupByIdent(r, r.PathValue("pg"))
	if err != nil {
		return err
	}
	view, err := s.portgroupView(r, g, s.uuids("Node"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, selectFields(view, fields))
	return nil
}

var portgroupCreatable = []string{"uuid", "name", "address", "node_uuid", "extra", "standalone_ports_supported", "mode", "properties",
	"physical_network", "category"}

// createPortgroup serves POST /v1/portgroups; the API writes the DB
// directly, as Ironic. 201 with Location.
func (s *server) createPortgroup(w http.ResponseWriter, r *http.Request) error {
	if err := portgroupsAllowed(r); err != nil {
		return err
	}
	v := VersionFrom(r.Context())
	body, err := readObject(r)
	if err != nil {
		return err
	}
	for k := range body {
		if since, ok := portgroupSince[k]; ok && v.Less(since) {
			return errNotAcceptable()
		}
	}
	if err := body.only("portgroup", portgroupCreatable...); err != nil {
		return err
	}
	if _, ok := body["node_uuid"]; !ok {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute node_uuid. Value: 'None'. Mandatory field missing.")
	}
	obj, err := s.reg.New("Portgroup")
	if err != nil {
		return err
	}
	g := obj.(*objects.Portgroup)
	g.UUID = uuid.NewString()
	if u, _, err := body.str("uuid", false); err != nil {
		return err
	} else if u != nil {
		if !isUUID(*u) {
			return errorf(http.StatusBadRequest, "Expected a UUID but received %s.", *u)
		}
		g.UUID = *u
	}
	if err := s.applyPortgroupAttrs(r, g, body); err != nil {
		return err
	}
	if g.Mode == nil {
		mode := defaultPortgroupMode
		g.Mode = &mode
	}
	if err := s.Store.Create(r.Context(), g); err != nil {
		return err
	}
	view, err := s.portgroupView(r, g, s.uuids("Node"))
	if err != nil {
		return err
	}
	w.Header().Set("Location", BaseURL(r)+"/v1/portgroups/"+g.UUID)
	writeView(w, http.StatusCreated, view)
	return nil
}
