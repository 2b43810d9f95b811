package api

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/core/objects"
)

// portFields are the port's API fields.
var portFields = []string{"uuid", "address", "node_uuid", "extra", "created_at", "updated_at", "links",
	"internal_info", "local_link_connection", "pxe_enabled", "portgroup_uuid",
	"physical_network", "is_smartnic", "name", "description", "vendor", "category"}

// portSince is the port gating table.
var portSince = gated{"internal_info": v1_18, "local_link_connection": v1_19, "pxe_enabled": v1_19,
	"portgroup_uuid": v1_24, "physical_network": v1_34, "is_smartnic": v1_53, "name": v1_88,
	"description": v1_97, "vendor": v1_100, "category": v1_101}

var portListFields = []string{"uuid", "address", "links"}

var portList = listPage{kind: "Port", collection: "ports", fields: portFields, listFields: portListFields,
	since: portSince, notFound: errPortNotFound}

var portPatch = patchRules{
	allowed: []string{"address", "extra", "is_smartnic", "local_link_connection", "node_uuid", "physical_network",
		"portgroup_uuid", "pxe_enabled", "name", "description", "vendor", "category"},
	since: portSince,
}

// portParent says which collection a port list is under.
type portParent int

const (
	parentNone portParent = iota
	parentNode
	parentPortgroup
)

// portView is the port as Ironic shows it at the request's version, with
// secrets masked.
func (s *server) portView(r *http.Request, p *objects.Port, nodes, pgs *uuidCache) (map[string]any, error) {
	view, err := s.unmaskedPortView(r, p, nodes, pgs)
	if err != nil {
		return nil, err
	}
	return maskView(view), nil
}

// unmaskedPortView is portView before masking: the document a PATCH
// applies to.
func (s *server) unmaskedPortView(r *http.Request, p *objects.Port, nodes, pgs *uuidCache) (map[string]any, error) {
	nodeID := p.NodeID
	nu, err := nodes.get(r.Context(), &nodeID)
	if err != nil {
		return nil, err
	}
	pgu, err := pgs.get(r.Context(), p.PortgroupID)
	if err != nil {
		return nil, err
	}
	view := map[string]any{
		"uuid": p.UUID, "address": p.Address, "node_uuid": nu, "extra": orEmpty(p.Extra),
		"created_at": isoTime(p.CreatedAt), "updated_at": isoTimePtr(p.UpdatedAt),
		"links": resourceLinks(r, "ports", p.UUID), "internal_info": orEmpty(p.InternalInfo),
		"local_link_connection": localLinkView(p.LocalLinkConnection, VersionFrom(r.Context())),
		"pxe_enabled":           p.PXEEnabled, "portgroup_uuid": pgu,
		"physical_network": strOrNil(p.PhysicalNetwork), "is_smartnic": p.IsSmartNIC, "name": strOrNil(p.Name),
		"description": strOrNil(p.Description), "vendor": strOrNil(p.Vendor), "category": strOrNil(p.Category),
	}
	portSince.hide(view, VersionFrom(r.Context()))
	s.hideUnpinned(view, "Port")
	return view, nil
}

// listPorts serves the port collections: /v1/ports (filters node,
// node_uuid, address, portgroup 1.24), /v1/nodes/{node}/ports and
// /v1/portgroups/{pg}/ports (1.24).
func (s *server) listPorts(detail bool, parent portParent) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		v := VersionFrom(r.Context())
		q := r.URL.Query()
		var conds []func(*bun.SelectQuery) *bun.SelectQuery
		switch parent {
		case parentNode:
			n, err := s.getNodeByIdent(r, r.PathValue("node"))
			if err != nil {
				return err
			}
			conds = append(conds, eq("node_id", n.ID))
		case parentPortgroup:
			if v.Less(v1_24) {
				return errorf(http.StatusNotFound, msgNotFound)
			}
			pg, err := s.portgroupByIdent(r, r.PathValue("pg"))
			if err != nil {
				return err
			}
			conds = append(conds, eq("portgroup_id", pg.ID))
		}
		if addr := q.Get("address"); addr != "" {
			if _, err := addressFilter(addr, nil); err != nil {
				return err
			}
		}
		if q.Has("portgroup") && v.Less(v1_24) {
			return errNotAcceptable()
		}
		shards, err := shardList(r, v1_82)
		if err != nil {
			return err
		}
		// Ironic takes node_uuid before node, and the path's node or
		// portgroup before the query's; a node, a portgroup and shards are
		// exclusive (403).
		nodeIdent := q.Get("node_uuid")
		if nodeIdent == "" {
			nodeIdent = q.Get("node")
		}
		pgIdent := q.Get("portgroup")
		if countGiven(parent == parentNode || nodeIdent != "", parent == parentPortgroup || pgIdent != "", len(shards) > 0) > 1 {
			return errorf(http.StatusForbidden, "Operation not permitted.")
		}
		byParent := parent != parentNone || nodeIdent != "" || pgIdent != ""
		cg, err := conductorGroupsFilter(r, byParent || q.Get("address") != "",
			"Filtering by conductor_groups cannot be combined with node_ident, portgroup_ident, or node address filters.")
		if err != nil {
			return err
		}
		if parent == parentNone && nodeIdent != "" {
			n, err := s.getNodeByIdent(r, nodeIdent)
			if err != nil {
				return err
			}
			conds = append(conds, eq("node_id", n.ID))
		}
		if parent == parentNone && pgIdent != "" {
			pg, err := s.portgroupByIdent(r, pgIdent)
			if err != nil {
				return err
			}
			conds = append(conds, eq("portgroup_id", pg.ID))
		}
		// As Ironic, one filter selects: the node or portgroup, else the
		// address, else the shards, else the conductor groups.
		switch addr := q.Get("address"); {
		case byParent:
		case addr != "":
			conds, _ = addressFilter(addr, conds)
		case len(shards) > 0:
			conds = append(conds, inShards(shards))
		case cg != nil:
			conds = append(conds, cg)
		}
		// ?description_contains= (the description is 1.97's; Ironic does not
		// gate the filter) narrows every selection but the address one.
		if kw := q.Get("description_contains"); kw != "" && (byParent || q.Get("address") == "") {
			conds = append(conds, func(q *bun.SelectQuery) *bun.SelectQuery {
				return q.Where("?TableAlias.description LIKE ?", "%"+kw+"%")
			})
		}
		if only := projectChildren(r); only != nil {
			conds = append(conds, only)
		}
		nodes, pgs := s.uuids("Node"), s.uuids("Portgroup")
		return s.servePage(w, r, portList, detail, all(conds), func(o objects.Object) (map[string]any, string, error) {
			p := o.(*objects.Port)
			view, err := s.portView(r, p, nodes, pgs)
			return view, p.UUID, err
		})
	}
}

// addressFilter adds ?address=MAC to a port or portgroup list's conditions;
// a value that is not a MAC address is a 400.
func addressFilter(addr string, conds []func(*bun.SelectQuery) *bun.SelectQuery) ([]func(*bun.SelectQuery) *bun.SelectQuery, error) {
	if addr == "" {
		return conds, nil
	}
	mac, ok := normalizeMAC(addr)
	if !ok {
		return nil, errorf(http.StatusBadRequest, "Expected a MAC address but received %s.", addr)
	}
	return append(conds, eq("address", mac)), nil
}

func eq(col string, val any) func(*bun.SelectQuery) *bun.SelectQuery {
	return func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.? = ?", bun.Ident(col), val) }
}

func all(conds []func(*bun.SelectQuery) *bun.SelectQuery) func(*bun.SelectQuery) *bun.SelectQuery {
	return func(q *bun.SelectQuery) *bun.SelectQuery {
		for _, c := range conds {
			q = c(q)
		}
		return q
	}
}

// portByIdent finds the path's port by UUID, or by name (names are set
// from 1.88; Ironic looks them up at every version).
func (s *server) portByIdent(r *http.Request) (*objects.Port, error) {
	ident := r.PathValue("port")
	if !isUUID(ident) && validLogicalName(ident, VersionFrom(r.Context())) {
		obj, err := s.Store.Load(r.Context(), "Port", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("?TableAlias.name = ?", ident)
		})
		if isNotFound(err) {
			return nil, errPortNotFound(ident)
		}
		if err != nil {
			return nil, err
		}
		return obj.(*objects.Port), nil
	}
	obj, err := s.byUUID(r.Context(), "Port", ident, errPortNotFound)
	if err != nil {
		return nil, err
	}
	p := obj.(*objects.Port)
	if err := s.authorizeByNodeID(r, p.NodeID, errPortNotFound(r.PathValue("port"))); err != nil {
		return nil, err
	}
	return p, nil
}

// getPort serves GET /v1/ports/{port}.
func (s *server) getPort(w http.ResponseWriter, r *http.Request) error {
	fields, err := parseFields(r, portFields, portSince)
	if err != nil {
		return err
	}
	p, err := s.portByIdent(r)
	if err != nil {
		return err
	}
	view, err := s.portView(r, p, s.uuids("Node"), s.uuids("Portgroup"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, selectFields(view, fields))
	return nil
}

var portCreatable = []string{"uuid", "address", "node_uuid", "extra", "local_link_connection", "pxe_enabled", "portgroup_uuid",
	"physical_network", "is_smartnic", "name", "description", "vendor", "category", "node_ident"}

// createPort serves POST /v1/ports: validated here, stored by the node's
// conductor; 201 with Location.
func (s *server) createPort(w http.ResponseWriter, r *http.Request) error {
	v := VersionFrom(r.Context())
	body, err := readObject(r)
	if err != nil {
		return err
	}
	for k := range body {
		if since, ok := portSince[k]; ok && v.Less(since) {
			return errNotAcceptable()
		}
	}
	if _, ok := body["node_ident"]; ok && v.Less(v1_94) {
		return errNotAcceptable()
	}
	if err := checkLocalLinkVersion(body, v); err != nil {
		return err
	}
	if err := body.only("port", portCreatable...); err != nil {
		return err
	}
	obj, err := s.reg.New("Port")
	if err != nil {
		return err
	}
	p := obj.(*objects.Port)
	if u, _, err := body.str("uuid", false); err != nil {
		return err
	} else if u != nil {
		if !isUUID(*u) {
			return errorf(http.StatusBadRequest, "Expected a UUID but received %s.", *u)
		}
		p.UUID = *u
	} else {
		p.UUID = uuid.NewString()
	}
	if err := s.portNodeIdent(r, body); err != nil {
		return err
	}
	for _, req := range []string{"address", "node_uuid"} {
		if _, ok := body[req]; !ok {
			return errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: 'None'. Mandatory field missing.", req)
		}
	}
	n, err := s.applyPortAttrs(r, p, body)
	if err != nil {
		return err
	}
	if err := checkSmartNIC(p); err != nil {
		return err
	}
	stored, err := s.Conductor.CreatePort(r.Context(), n, p)
	if err != nil {
		return err
	}
	view, err := s.portView(r, stored, s.uuids("Node"), s.uuids("Portgroup"))
	if err != nil {
		return err
	}
	w.Header().Set("Location", BaseURL(r)+"/v1/ports/"+stored.UUID)
	writeView(w, http.StatusCreated, view)
	return nil
}
