package api

import (
	"net/http"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/uptrace/bun"
)

// The node BIOS settings resource (API 1.40): read-only, what the node's
// bios interface last cached. Every hardware type's bios interface is
// no-bios today, so a node has none unless a test wrote them
// (db.Store.ReplaceBIOSSettings); Ironic's no-bios likewise leaves the
// list empty. The BIOS registry fields, ?detail and ?fields are 1.74.

// biosAllowed answers 404 below 1.40, as Ironic's node controller does for
// the bios sub-resource.
func biosAllowed(r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_40) {
		return errorf(http.StatusNotFound, msgNotFound)
	}
	return nil
}

// biosView is a setting as Ironic's 1.40 shows it: created_at, updated_at,
// name, value and links under /v1/nodes/<nodeRef>/bios/<name>.
func biosView(r *http.Request, nodeRef string, b *objects.BIOSSetting) map[string]any {
	return map[string]any{
		"created_at": isoTime(b.CreatedAt), "updated_at": isoTimePtr(b.UpdatedAt),
		"name": b.Name, "value": strOrNil(b.Value),
		"links": resourceLinks(r, "nodes", nodeRef+"/bios/"+b.Name),
	}
}

// listBIOS serves GET /v1/nodes/{node}/bios (1.40): the node's settings by
// name. Before 1.74 Ironic's query schema admits neither detail nor fields
// (400); other query parameters are ignored. The links name the node as
// the request did (Ironic builds them from the identifier given).
func (s *server) listBIOS(w http.ResponseWriter, r *http.Request) error {
	if err := biosAllowed(r); err != nil {
		return err
	}
	q := r.URL.Query()
	var extra []string
	for _, k := range []string{"detail", "fields"} {
		if q.Has(k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		return errorf(http.StatusBadRequest, "Schema error: %s", unexpected(extra))
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
		items = append(items, biosView(r, ident, o.(*objects.BIOSSetting)))
	}
	writeCollection(w, "bios", items, "")
	return nil
}

// getBIOSSetting serves GET /v1/nodes/{node}/bios/{setting} (1.40):
// {"<setting>": view}, links by node UUID; a setting the node does not
// have is Ironic's BIOSSettingNotFound (404).
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
	writeView(w, http.StatusOK, map[string]any{name: biosView(r, n.UUID, obj.(*objects.BIOSSetting))})
	return nil
}
