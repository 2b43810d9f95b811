package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/uptrace/bun"
)

// The node firmware resource (API 1.86): read-only, the firmware
// components the node's firmware interface last cached (after inspection,
// verify, cleaning and the firmware update step; db.Store.
// SyncFirmwareComponents). A no-firmware node has none, as Ironic's.

var (
	// firmwareDefaultFields are Ironic's _DEFAULT_RETURN_FIELDS; created_at
	// and updated_at are always shown.
	firmwareDefaultFields = []string{"component", "initial_version", "current_version", "last_version_flashed"}
	// firmwareQueryFields is Ironic's query schema's enum for ?fields.
	firmwareQueryFields = []string{"created_at", "updated_at", "component", "initial_version", "current_version",
		"last_version_flashed", "vendor", "model", "serial_number"}
	// firmwareIdentityFields are API 1.114's, not served here.
	firmwareIdentityFields = []string{"vendor", "model", "serial_number"}
)

// firmwareFields reads ?fields and ?detail as Ironic's firmware get_all;
// any other query parameter is a schema error.
func firmwareFields(r *http.Request) ([]string, error) {
	q := r.URL.Query()
	var extra []string
	for k := range q {
		if k != "fields" && k != "detail" {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return nil, errorf(http.StatusBadRequest, "Schema error: %s", unexpected(extra))
	}
	detail := false
	if q.Has("detail") {
		var err error
		if detail, err = parseBool("detail", q.Get("detail")); err != nil {
			return nil, err
		}
	}
	raw, ok := q["fields"]
	if !ok {
		return firmwareDefaultFields, nil
	}
	fields, err := schemaFields(raw, firmwareQueryFields)
	if err != nil {
		return nil, err
	}
	var identity []string
	for _, f := range fields {
		if contains(firmwareIdentityFields, f) {
			identity = append(identity, f)
		}
	}
	if len(identity) > 0 {
		slices.Sort(identity)
		return nil, errorf(http.StatusBadRequest, "Fields %s are not allowed in this API version. They require at least API version 1.114.",
			strings.Join(slices.Compact(identity), ", "))
	}
	if detail {
		return nil, errorf(http.StatusBadRequest, "Can not specify ?detail=True and fields in the same request.")
	}
	return fields, nil
}

// firmwareView is a component as Ironic shows it: created_at and
// updated_at always, then fields; no links.
func firmwareView(c *objects.FirmwareComponent, fields []string) map[string]any {
	v := map[string]any{"created_at": isoTime(c.CreatedAt), "updated_at": isoTimePtr(c.UpdatedAt)}
	for _, f := range fields {
		switch f {
		case "component":
			v[f] = c.Component
		case "initial_version":
			v[f] = c.InitialVersion
		case "current_version":
			v[f] = strOrNil(c.CurrentVersion)
		case "last_version_flashed":
			v[f] = strOrNil(c.LastVersionFlashed)
		}
	}
	return v
}

// listFirmware serves GET /v1/nodes/{node}/firmware (1.86; 404 below, as
// Ironic's node controller answers for the sub-resource).
func (s *server) listFirmware(w http.ResponseWriter, r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_86) {
		return errorf(http.StatusNotFound, msgNotFound)
	}
	fields, err := firmwareFields(r)
	if err != nil {
		return err
	}
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	nodeID := n.ID
	objs, err := s.Store.LoadAll(r.Context(), "FirmwareComponent", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.node_id = ?", nodeID).OrderExpr("?TableAlias.component")
	})
	if err != nil {
		return err
	}
	items := make([]map[string]any, 0, len(objs))
	for _, o := range objs {
		items = append(items, firmwareView(o.(*objects.FirmwareComponent), fields))
	}
	writeCollection(w, "firmware", items, "")
	return nil
}
