package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/pyrepr"
	"github.com/rivetmetal/rivet/core/rpc"
)

// vifsAllowed answers 404 below 1.28, as Ironic does for the vifs
// sub-resource of a node at an older version.
func vifsAllowed(r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_28) {
		return errorf(http.StatusNotFound, msgNotFound)
	}
	return nil
}

// listVIFs serves GET /v1/nodes/{node}/vifs (1.28): {"vifs": [{"id"}]}.
func (s *server) listVIFs(w http.ResponseWriter, r *http.Request) error {
	if err := vifsAllowed(r); err != nil {
		return err
	}
	return serveNodeQuery(s, w, r, func(ctx context.Context, n *objects.Node) (map[string]any, error) {
		vifs, err := s.Conductor.VIFList(ctx, n)
		if vifs == nil {
			vifs = []rpc.VIF{}
		}
		return map[string]any{"vifs": vifs}, err
	})
}

// attachVIF serves POST /v1/nodes/{node}/vifs (1.28) with {"id", …}: 204.
// Like Ironic the body must carry a string id that is a UUID or a logical
// name, may carry other keys, and travels whole to the conductor as
// vif_info; it is checked before the node is looked up, as Ironic does.
func (s *server) attachVIF(w http.ResponseWriter, r *http.Request) error {
	if err := vifsAllowed(r); err != nil {
		return err
	}
	body, err := readObject(r)
	if err != nil {
		return err
	}
	raw, ok := body["id"]
	if !ok {
		return errorf(http.StatusBadRequest, "Schema error for vif: 'id' is a required property")
	}
	var id string
	if err := json.Unmarshal(raw, &id); err != nil || isNull(raw) {
		return errorf(http.StatusBadRequest, "Schema error for vif: %s is not of type 'string'", pyrepr.JSON(raw))
	}
	if err := checkVIFIdent("id", id, r); err != nil {
		return err
	}
	info := make(map[string]any, len(body))
	for k, raw := range body {
		var v any
		if err := decodeJSON(raw, &v); err != nil {
			return err
		}
		info[k] = v
	}
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	_, port := info["port_uuid"]
	_, group := info["portgroup_uuid"]
	if port && group && VersionFrom(r.Context()).AtLeast(v1_67) {
		return errorf(http.StatusBadRequest, "Cannot specify both port_uuid and portgroup_uuid")
	}
	if err := s.Conductor.VIFAttach(r.Context(), n, info); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// detachVIF serves DELETE /v1/nodes/{node}/vifs/{vif} (1.28): 204.
func (s *server) detachVIF(w http.ResponseWriter, r *http.Request) error {
	if err := vifsAllowed(r); err != nil {
		return err
	}
	vif := r.PathValue("vif")
	if err := checkVIFIdent("vif_id", vif, r); err != nil {
		return err
	}
	n, err := s.getNodeByIdent(r, r.PathValue("node"))
	if err != nil {
		return err
	}
	if err := s.Conductor.VIFDetach(r.Context(), n, vif); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// checkVIFIdent is Ironic's uuid_or_name check of a VIF id.
func checkVIFIdent(arg, id string, r *http.Request) error {
	if isUUID(id) || validLogicalName(id, VersionFrom(r.Context())) {
		return nil
	}
	return errorf(http.StatusBadRequest, "Expected UUID or name for %s: %s", arg, id)
}
