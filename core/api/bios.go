package api

import (
	"net/http"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/uptrace/bun"
)

// The node BIOS settings resource (API 1.40): read-only, what the node's
// bios interface last cached (the conductor's cache after verify,
// cleaning and the bios steps; db.Store.SyncBIOSSettings). A no-bios node
// has none, as Ironic's. From 1.74 a setting also carries what the
// hardware's attribute registry says of it, and the list takes ?detail
// and ?fields, exactly as Ironic's bios controller.

// v1_74 is the BIOS registry microversion.
var v1_74 = version.Version{Major: 1, Minor: 74}

// biosDefaultFields are a setting's fields without ?detail or ?fields;
// biosRegistryFields those ?detail=True and GET of one setting (1.74) add
// (Ironic's _DEFAULT_RETURN_FIELDS and _DEFAULT_FIELDS_WITH_REGISTRY).
var (
	biosDefaultFields  = []string{"name", "value"}
	biosRegistryFields = []string{"name", "value", "attribute_type", "allowable_values", "lower_bound",
		"max_length", "min_length", "read_only", "reset_required", "unique", "upper_bound"}
	// biosQueryFields is Ironic's 1.74 query schema's enum for ?fields.
	biosQueryFields = []string{"allowable_values", "attribute_type", "created_at", "lower_bound", "links", "max_length",
		"min_length", "name", "node_uuid", "read_only", "reset_required", "unique", "updated_at", "value"}
)

// biosAllowed answers 404 below 1.40, as Ironic's node controller does for
// the bios sub-resource.
func biosAllowed(r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_40) {
		return errorf(http.StatusNotFound, msgNotFound)
	}
	return nil
}

// biosView is a setting as Ironic shows it: created_at, updated_at and
// links under /v1/nodes/<nodeRef>/bios/<name> always, plus fields (links
// and node_uuid, admitted by the query schema, add nothing).
func biosView(r *http.Request, nodeRef string, b *objects.BIOSSetting, fields []string) map[string]any {
	v := map[string]any{
		"created_at": isoTime(b.CreatedAt), "updated_at": isoTimePtr(b.UpdatedAt),
		"links": resourceLinks(r, "nodes", nodeRef+"/bios/"+b.Name),
	}
	for _, f := range fields {
		switch f {
		case "name":
			v[f] = b.Name
		case "value":
			v[f] = strOrNil(b.Value)
		case "attribute_type":
			v[f] = strOrNil(b.AttributeType)
		case "allowable_values":
			v[f] = append([]string{}, b.AllowableValues...)
		case "lower_bound":
			v[f] = intOrNil(b.LowerBound)
		case "upper_bound":
			v[f] = intOrNil(b.UpperBound)
		case "min_length":
			v[f] = intOrNil(b.MinLength)
		case "max_length":
			v[f] = intOrNil(b.MaxLength)
		case "read_only":
			v[f] = boolOrNil(b.ReadOnly)
		case "reset_required":
			v[f] = boolOrNil(b.ResetRequired)
		case "unique":
			v[f] = boolOrNil(b.Unique)
		}
	}
	return v
}

func intOrNil(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// biosListFields reads ?detail and ?fields as Ironic's bios get_all: before
// 1.74 the query schema admits neither (400); from 1.74 ?detail=True adds
// the registry fields, ?fields picks from the schema's enum, and both
// together are refused.
func biosListFields(r *http.Request) ([]string, error) {
	q := r.URL.Query()
	if VersionFrom(r.Context()).Less(v1_74) {
		var extra []string
		for _, k := range []string{"detail", "fields"} {
			if q.Has(k) {
				extra = append(extra, k)
			}
		}
		if len(extra) > 0 {
			return nil, errorf(http.StatusBadRequest, "Schema error: %s", unexpected(extra))
		}
		return biosDefaultFields, nil
	}
	detail := false
	if q.Has("detail") {
		var err error
		if detail, err = parseBool("detail", q.Get("detail")); err != nil {
			return nil, err
		}
	}
	var fields []string
	if raw, ok := q["fields"]; ok {
		var err error
		if fields, err = schemaFields(raw, biosQueryFields); err != nil {
			return nil, err
		}
		if fields == nil {
			fields = []string{}
		}
	}
	switch {
	case fields != nil && detail:
		return nil, errorf(http.StatusBadRequest, "Can not specify ?detail=True and fields in the same request.")
	case detail:
		return biosRegistryFields, nil
	case fields == nil:
		return biosDefaultFields, nil
	}
	return fields, nil
}

// listBIOS serves GET /v1/nodes/{node}/bios (1.40): the node's settings by
// name. The links name the node as the request did (Ironic builds them
// from the identifier given).
func (s *server) listBIOS(w http.ResponseWriter, r *http.Request) error {
	if err := biosAllowed(r); err != nil {
		return err
	}
	fields, err := biosListFields(r)
	if err != nil {
		return err
	}
	ident := r.PathValue("node")
	n, err := s.getNodeByIdent(r, ident)
	if err != nil {
		return err
	}
	nodeID := n.ID
	objs, err := s.Store.LoadAll(r.Context(), "BIOSSetting", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.node_id = ?", nodeID).OrderExpr("?TableAlias.name")
	})
	if err != nil {
		return err
	}
	items := make([]map[string]any, 0, len(objs))
	for _, o := range objs {
		items = append(items, biosView(r, ident, o.(*objects.BIOSSetting), fields))
	}
	writeCollection(w, "bios", items, "")
	return nil
}

// getBIOSSetting serves GET /v1/nodes/{node}/bios/{setting} (1.40):
// {"<setting>": view}, links by node UUID, with the registry fields from
// 1.74; a setting the node does not have is Ironic's BIOSSettingNotFound
// (404).
func (s *server) getBIOSSetting(w http.ResponseWriter, r *http.Request) error {
	if err := biosAllowed(r); err != nil {
		return err
	}
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	name, nodeID := r.PathValue("setting"), n.ID
	obj, err := s.Store.Load(r.Context(), "BIOSSetting", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.node_id = ?", nodeID).Where("?TableAlias.name = ?", name)
	})
	if err != nil {
		if isNotFound(err) {
			return errorf(http.StatusNotFound, "Node %s doesn't have a BIOS setting '%s'", n.UUID, name)
		}
		return err
	}
	fields := biosDefaultFields
	if !VersionFrom(r.Context()).Less(v1_74) {
		fields = biosRegistryFields
	}
	writeView(w, http.StatusOK, map[string]any{name: biosView(r, n.UUID, obj.(*objects.BIOSSetting), fields)})
	return nil
}
