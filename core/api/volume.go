package api

import (
	"net/http"
	"strings"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/uptrace/bun"
)

// The volume API (1.32): /v1/volume with its connectors and targets, and
// the same under /v1/nodes/{node}/volume. As in Ironic, a node's
// collections only list: a single item, a create, an update or a
// deletion under a node is 400 "Malformed request URI.".

var v1_32 = version.Version{Major: 1, Minor: 32}

// volumeKind describes one of the two volume resources; the handlers are
// shared.
type volumeKind struct {
	kind string // object kind, "VolumeConnector"
	coll string // collection key and path segment, "connectors"
	noun string // in Ironic's not-found message, "Volume connector"
	// arg names the resource in Ironic's argument errors ("connector").
	arg string
	// fields are the API fields in Ironic's order (for its enum message);
	// listFields the fields of a list without ?detail or ?fields.
	fields, listFields []string
	// props are the create schema's properties: JSON type(s) by name, in
	// schema order; required lists the mandatory ones in schema order.
	props    []volumeProp
	required []string
	// patchable are the fields a PATCH may touch, in Ironic's order.
	patchable []string
	view      func(r *http.Request, obj objects.Object, nodeUUID any) map[string]any
	nodeID    func(obj objects.Object) *int64
	// set stores one validated body attribute on the object.
	set func(obj objects.Object, attr string, val any)
	// duplicate is Ironic's 409 for a unique violation on create.
	duplicate func(obj objects.Object) error
}

// volumeProp is one property of a volume resource's body schema.
type volumeProp struct {
	name  string
	types []string // JSON schema types: "string", "integer", "object", "null"
}

var volumeConnectors = &volumeKind{
	kind: "VolumeConnector", coll: "connectors", noun: "Volume connector", arg: "connector",
	fields:     []string{"connector_id", "created_at", "extra", "links", "node_uuid", "type", "updated_at", "uuid"},
	listFields: []string{"uuid", "node_uuid", "type", "connector_id"},
	props: []volumeProp{{"connector_id", []string{"string"}}, {"extra", []string{"object", "null"}},
		{"node_uuid", []string{"string"}}, {"type", []string{"string"}}, {"uuid", []string{"string", "null"}}},
	required:  []string{"connector_id", "node_uuid", "type"},
	patchable: []string{"connector_id", "extra", "node_uuid", "type"},
	view: func(r *http.Request, obj objects.Object, nodeUUID any) map[string]any {
		c := obj.(*objects.VolumeConnector)
		return map[string]any{
			"uuid": c.UUID, "node_uuid": nodeUUID, "type": c.Type, "connector_id": c.ConnectorID,
			"extra": orEmpty(c.Extra), "created_at": isoTime(c.CreatedAt), "updated_at": isoTimePtr(c.UpdatedAt),
			"links": resourceLinks(r, "volume/connectors", c.UUID),
		}
	},
	nodeID: func(obj objects.Object) *int64 { return &obj.(*objects.VolumeConnector).NodeID },
	set: func(obj objects.Object, attr string, val any) {
		c := obj.(*objects.VolumeConnector)
		switch attr {
		case "connector_id":
			c.ConnectorID = val.(string)
		case "type":
			c.Type = val.(string)
		case "extra":
			c.Extra = val.(map[string]any)
		}
	},
	duplicate: func(obj objects.Object) error {
		c := obj.(*objects.VolumeConnector)
		return errorf(http.StatusConflict, "A volume connector with type %s and connector ID %s already exists.", c.Type, c.ConnectorID)
	},
}

var volumeTargets = &volumeKind{
	kind: "VolumeTarget", coll: "targets", noun: "Volume target", arg: "target",
	fields: []string{"boot_index", "created_at", "extra", "links", "node_uuid", "properties", "updated_at", "uuid",
		"volume_id", "volume_type"},
	listFields: []string{"uuid", "node_uuid", "volume_type", "boot_index", "volume_id"},
	props: []volumeProp{{"boot_index", []string{"integer"}}, {"extra", []string{"object", "null"}},
		{"node_uuid", []string{"string"}}, {"properties", []string{"object", "null"}}, {"volume_id", []string{"string"}},
		{"volume_type", []string{"string"}}, {"uuid", []string{"string", "null"}}},
	required:  []string{"boot_index", "node_uuid", "volume_id", "volume_type"},
	patchable: []string{"boot_index", "extra", "node_uuid", "properties", "volume_id", "volume_type"},
	view: func(r *http.Request, obj objects.Object, nodeUUID any) map[string]any {
		t := obj.(*objects.VolumeTarget)
		return map[string]any{
			"uuid": t.UUID, "node_uuid": nodeUUID, "volume_type": t.VolumeType, "boot_index": t.BootIndex,
			"volume_id": t.VolumeID, "properties": orEmpty(t.Properties), "extra": orEmpty(t.Extra),
			"created_at": isoTime(t.CreatedAt), "updated_at": isoTimePtr(t.UpdatedAt),
			"links": resourceLinks(r, "volume/targets", t.UUID),
		}
	},
	nodeID: func(obj objects.Object) *int64 { return &obj.(*objects.VolumeTarget).NodeID },
	set: func(obj objects.Object, attr string, val any) {
		t := obj.(*objects.VolumeTarget)
		switch attr {
		case "volume_type":
			t.VolumeType = val.(string)
		case "volume_id":
			t.VolumeID = val.(string)
		case "boot_index":
			t.BootIndex = val.(int64)
		case "properties":
			t.Properties = val.(map[string]any)
		case "extra":
			t.Extra = val.(map[string]any)
		}
	},
	duplicate: func(obj objects.Object) error {
		return errorf(http.StatusConflict, "A volume target with boot index '%d' for the same node already exists.",
			obj.(*objects.VolumeTarget).BootIndex)
	},
}

// volumeAllowed answers 404 below 1.32, as Ironic for the volume
// resources at an older version.
func volumeAllowed(r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_32) {
		return errorf(http.StatusNotFound, msgNotFound)
	}
	return nil
}

func errMalformedURI() error { return errorf(http.StatusBadRequest, "Malformed request URI.") }

func (k *volumeKind) notFound(ident string) error {
	return errorf(http.StatusNotFound, "%s %s could not be found.", k.noun, ident)
}

// getVolume serves GET /v1/volume and /v1/nodes/{node}/volume: the links
// to the connectors and targets. As Ironic, the node is not looked up.
func (s *server) getVolume(underNode bool) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := volumeAllowed(r); err != nil {
			return err
		}
		if err := authorizeVolumeRoot(r); err != nil {
			return err
		}
		coll, rest := "volume", ""
		if underNode {
			ident := r.PathValue("node")
			if !isUUID(ident) && !validLogicalName(ident, VersionFrom(r.Context())) {
				return errorf(http.StatusBadRequest, "Expected a logical name or UUID but received %s.", ident)
			}
			coll, rest = "nodes", ident+"/volume/"
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"links":      resourceLinks(r, coll, rest),
			"connectors": resourceLinks(r, coll, rest+"connectors"),
			"targets":    resourceLinks(r, coll, rest+"targets"),
		})
		return nil
	}
}

// volumeFields reads ?fields and ?detail of a volume request: both is 400,
// a field the resource lacks is Ironic's schema error. nil means every
// field.
func (k *volumeKind) volumeFields(r *http.Request, list bool) ([]string, error) {
	q := r.URL.Query()
	detail := false
	if d, ok := q["detail"]; ok {
		b, err := parseBool("detail", strings.Join(d, ","))
		if err != nil {
			return nil, err
		}
		detail = b
	}
	raw, ok := q["fields"]
	if !ok {
		if list && !detail {
			return k.listFields, nil
		}
		return nil, nil
	}
	fields, err := schemaFields(raw, k.fields)
	if err != nil {
		return nil, err
	}
	if len(fields) > 0 && detail {
		return nil, errorf(http.StatusBadRequest, "Can't fetch a subset of fields with 'detail' set")
	}
	if len(fields) == 0 && list && !detail {
		return k.listFields, nil
	}
	return fields, nil
}

// schemaFields reads the values of a ?fields query parameter as Ironic's
// query schemas: comma-separated names, blanks skipped, each one of allowed
// (a schema error naming the enum otherwise). nil when none is named.
func schemaFields(raw, allowed []string) ([]string, error) {
	var fields []string
	for _, item := range raw {
		for _, f := range strings.Split(item, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			if !contains(allowed, f) {
				return nil, errorf(http.StatusBadRequest, "Schema error: '%s' is not one of [%s]", f, quotedList(allowed))
			}
			fields = append(fields, f)
		}
	}
	return fields, nil
}

// quotedList is a Python list's repr of strings, without the brackets.
func quotedList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = "'" + s + "'"
	}
	return strings.Join(q, ", ")
}

// volumeView is the resource's view with its node's UUID, masked.
func (s *server) volumeView(r *http.Request, k *volumeKind, obj objects.Object, nodes *uuidCache) (map[string]any, error) {
	nu, err := nodes.get(r.Context(), k.nodeID(obj))
	if err != nil {
		return nil, err
	}
	view := maskView(k.view(r, obj, nu))
	redactVolumeView(r, k, view)
	return view, nil
}

// listVolume serves /v1/volume/{connectors,targets} (?node= filter) and
// /v1/nodes/{node}/volume/{connectors,targets}.
func (s *server) listVolume(k *volumeKind, underNode bool) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := volumeAllowed(r); err != nil {
			return err
		}
		fields, err := k.volumeFields(r, true)
		if err != nil {
			return err
		}
		if m := r.URL.Query().Get("marker"); m != "" && !isUUID(m) {
			return errorf(http.StatusBadRequest, "Expected UUID for marker: %s", m)
		}
		var conds []func(*bun.SelectQuery) *bun.SelectQuery
		ident := r.URL.Query().Get("node")
		if ident != "" && !isUUID(ident) && !validLogicalName(ident, VersionFrom(r.Context())) {
			return errorf(http.StatusBadRequest, "Expected UUID or name for node: %s", ident)
		}
		if underNode {
			ident = r.PathValue("node")
		}
		if ident != "" {
			n, err := s.getNodeByIdent(r, ident)
			if err != nil {
				return err
			}
			conds = append(conds, eq("node_id", n.ID))
		}
		if only := projectChildren(r); only != nil { // Ironic's baremetal:volume:list: the project's nodes'
			conds = append(conds, only)
		}
		pg, err := s.parsePage(r, k.kind)
		if err != nil {
			return err
		}
		objs, err := s.loadPage(r.Context(), k.kind, pg, all(conds), k.notFound)
		if err != nil {
			return err
		}
		nodes := s.uuids("Node")
		items, last := []map[string]any{}, ""
		for _, o := range objs {
			view, err := s.volumeView(r, k, o, nodes)
			if err != nil {
				return err
			}
			items, last = append(items, selectFields(view, fields)), view["uuid"].(string)
		}
		writeCollection(w, k.coll, items, nextURL(r, pg, len(objs), last))
		return nil
	}
}

// volumeItem loads a connector or target by the path's UUID, in Ironic's
// order: 404 below 1.32, a value that is not a UUID is its argument error,
// a missing one 404, then any item under a node is a malformed URI.
func (s *server) volumeItem(r *http.Request, k *volumeKind, underNode bool) (objects.Object, error) {
	if err := volumeAllowed(r); err != nil {
		return nil, err
	}
	obj, err := s.volumeByUUID(r, k)
	if err == nil && underNode {
		return nil, errMalformedURI()
	}
	return obj, err
}

// volumeByUUID loads a connector or target by the path's UUID: a value
// that is not a UUID is Ironic's argument error, a missing one 404.
func (s *server) volumeByUUID(r *http.Request, k *volumeKind) (objects.Object, error) {
	ident := r.PathValue("id")
	if !isUUID(ident) {
		return nil, errorf(http.StatusBadRequest, "Expected UUID for %s_uuid: %s", k.arg, ident)
	}
	return s.byUUID(r.Context(), k.kind, ident, k.notFound)
}

// getVolumeItem serves GET /v1/volume/{connectors,targets}/{id}.
func (s *server) getVolumeItem(k *volumeKind, underNode bool) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		obj, err := s.volumeItem(r, k, underNode)
		if err != nil {
			return err
		}
		if err := s.authorizeVolume(r, k, obj, policyVolumeGet); err != nil {
			return err
		}
		fields, err := k.volumeFields(r, false)
		if err != nil {
			return err
		}
		view, err := s.volumeView(r, k, obj, s.uuids("Node"))
		if err != nil {
			return err
		}
		writeView(w, http.StatusOK, selectFields(view, fields))
		return nil
	}
}

// volumeRoutes registers the volume resources, at the top and under a
// node.
func (s *server) volumeRoutes(h func(pattern string, fn apiFunc)) {
	h("GET /v1/volume", s.getVolume(false))
	h("GET /v1/nodes/{node}/volume", s.getVolume(true))
	for _, k := range []*volumeKind{volumeConnectors, volumeTargets} {
		for prefix, underNode := range map[string]bool{"/v1/volume/": false, "/v1/nodes/{node}/volume/": true} {
			coll := prefix + k.coll
			h("GET "+coll, s.listVolume(k, underNode))
			h("POST "+coll, s.createVolume(k, underNode))
			h("GET "+coll+"/{id}", s.getVolumeItem(k, underNode))
			h("PATCH "+coll+"/{id}", s.patchVolume(k, underNode))
			h("DELETE "+coll+"/{id}", s.deleteVolume(k, underNode))
		}
	}
}
