package api

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/pyrepr"
	"github.com/rivetmetal/rivet/db"
)

// maxVolumeString is the width of the volume tables' string columns: a
// longer value is refused with 400 rather than failing in the database.
const maxVolumeString = 255

// checkSchema validates a volume body (create) or a patched document
// (update) against the kind's schema as Ironic's args.schema does (the
// error best_match picks; the message names the argument: "connector",
// "target" or "patch"); then Rivet refuses what its columns cannot hold:
// a string longer than they are, an integer beyond 32 bits.
func (k *volumeKind) checkSchema(arg string, body object) error {
	doc := make(map[string]any, len(body))
	for key, raw := range body {
		var v any
		if err := decodeJSON(raw, &v); err != nil {
			return err
		}
		doc[key] = v
	}
	props := make([]schemaProp, len(k.props))
	for i, p := range k.props {
		props[i] = schemaProp{p.name, func(c *schemaCheck, d int, v any) { c.typeOK(d, v, p.types...) }}
	}
	c := &schemaCheck{}
	c.object(0, doc, props, k.required)
	if err := c.err(arg); err != nil {
		return err
	}
	for _, p := range k.props {
		switch v := doc[p.name].(type) {
		case string:
			if len(v) > maxVolumeString {
				return errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: '%s'. Longer than %d characters.",
					p.name, v, maxVolumeString)
			}
		case json.Number:
			if math.Abs(jsonNumber(v)) > math.MaxInt32 {
				return errorf(http.StatusBadRequest, "Schema error for %s: %s is out of range", arg, v)
			}
		}
	}
	return nil
}

// applyVolumeAttrs stores a validated body's attributes (but uuid and
// node_uuid) on obj.
func (k *volumeKind) applyVolumeAttrs(obj objects.Object, body object) error {
	for _, p := range k.props {
		raw, ok := body[p.name]
		if !ok || p.name == "uuid" || p.name == "node_uuid" {
			continue
		}
		switch {
		case contains(p.types, "object"):
			m := map[string]any{}
			if !isNull(raw) {
				var err error
				if m, err = asDict(raw); err != nil {
					return err
				}
			}
			k.set(obj, p.name, m)
		case contains(p.types, "integer"):
			var f float64
			if err := json.Unmarshal(raw, &f); err != nil {
				return err
			}
			k.set(obj, p.name, int64(f))
		default:
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
			k.set(obj, p.name, s)
		}
	}
	return nil
}

// createVolume serves POST /v1/volume/{connectors,targets}: validated and
// written by the API, as Ironic; 201 with Location.
func (s *server) createVolume(k *volumeKind, underNode bool) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := volumeAllowed(r); err != nil {
			return err
		}
		body, err := readObject(r)
		if err != nil {
			return err
		}
		if err := k.checkSchema(k.arg, body); err != nil {
			return err
		}
		var nodeIdent, id string
		_ = json.Unmarshal(body["node_uuid"], &nodeIdent)
		if !isUUID(nodeIdent) {
			return errorf(http.StatusBadRequest, "Expected UUID for node_uuid: %s", nodeIdent)
		}
		if raw, ok := body["uuid"]; ok && !isNull(raw) {
			_ = json.Unmarshal(raw, &id)
			if !isUUID(id) {
				return errorf(http.StatusBadRequest, "Expected UUID for uuid: %s", id)
			}
		}
		node, err := s.byUUID(r.Context(), "Node", nodeIdent, func(string) error {
			return errorf(http.StatusBadRequest, "Invalid input for field/attribute node_uuid. Value: '%s'. ", nodeIdent)
		})
		n, _ := node.(*objects.Node)
		if aerr := authorizeVolumeCreate(r, n); aerr != nil {
			return aerr
		}
		if err != nil {
			return err
		}
		if underNode {
			return errMalformedURI()
		}
		obj, err := s.reg.New(k.kind)
		if err != nil {
			return err
		}
		if id == "" {
			id = uuid.NewString()
		}
		if err := s.reg.Set(obj, "uuid", id); err != nil {
			return err
		}
		*k.nodeID(obj) = node.(*objects.Node).ID
		if err := k.applyVolumeAttrs(obj, body); err != nil {
			return err
		}
		if err := s.Store.Create(r.Context(), obj); err != nil {
			if !db.IsUniqueViolation(err) {
				return err
			}
			if taken, terr := s.taken(r.Context(), k.table(), "uuid", id, 0); terr == nil && taken {
				return errorf(http.StatusConflict, "A %s with UUID %s already exists.", strings.ToLower(k.noun), id)
			}
			return k.duplicate(obj)
		}
		view, err := s.volumeView(r, k, obj, s.uuids("Node"))
		if err != nil {
			return err
		}
		w.Header().Set("Location", BaseURL(r)+"/v1/volume/"+k.coll+"/"+id)
		writeView(w, http.StatusCreated, view)
		return nil
	}
}

// table is the kind's table.
func (k *volumeKind) table() string { return db.ObjectTables()[k.kind] }

// patchVolume serves PATCH /v1/volume/{connectors,targets}/{id}, saved by
// the node's conductor (which refuses unless the node is powered off).
func (s *server) patchVolume(k *volumeKind, underNode bool) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		obj, err := s.volumeItem(r, k, underNode)
		if err != nil {
			return err
		}
		if err := s.authorizeVolume(r, k, obj, policyVolumeUpdate); err != nil {
			return err
		}
		ops, err := s.readPatch(r)
		if err != nil {
			return err
		}
		for _, op := range ops {
			if !contains(k.patchable, op.root()) {
				return errorf(http.StatusBadRequest, "Cannot patch %s. Only the following can be updated: %s",
					op.Path, strings.Join(k.patchable, ", "))
			}
		}
		for _, op := range ops {
			if op.Path != "/node_uuid" || op.Op == "remove" {
				continue
			}
			var u string
			if json.Unmarshal(op.Value, &u) != nil || !isUUID(u) {
				return errorf(http.StatusBadRequest, "Expected a UUID for node_uuid, but received %s.", pyStr(op.Value))
			}
		}
		nodes := s.uuids("Node")
		doc, err := s.volumeDoc(r, k, obj, nodes)
		if err != nil {
			return err
		}
		patched, err := applyPatch(r.Context(), doc, ops)
		if err != nil {
			return err
		}
		body, err := k.schemaDoc(patched)
		if err != nil {
			return err
		}
		if err := k.checkSchema("patch", body); err != nil {
			return err
		}
		changed, err := changedAttrs(doc, patched, k.patchable)
		if err != nil {
			return err
		}
		node, err := s.nodeByID(r.Context(), *k.nodeID(obj))
		if err != nil {
			return err
		}
		if raw, ok := changed["node_uuid"]; ok {
			var u string
			_ = json.Unmarshal(raw, &u)
			if node, err = s.nodeRef(r, u); err != nil {
				return err
			}
			*k.nodeID(obj) = node.ID
			if err := s.reg.MarkChanged(obj, "node_id"); err != nil {
				return err
			}
		}
		if err := k.applyVolumeAttrs(obj, changed); err != nil {
			return err
		}
		stored := obj
		if len(changed) > 0 {
			if stored, err = s.updateVolume(r, k, node, obj); err != nil {
				return err
			}
		}
		view, err := s.volumeView(r, k, stored, nodes)
		if err != nil {
			return err
		}
		writeView(w, http.StatusOK, view)
		return nil
	}
}

// volumeDoc is the unmasked document a PATCH applies to.
func (s *server) volumeDoc(r *http.Request, k *volumeKind, obj objects.Object, nodes *uuidCache) (map[string]any, error) {
	nu, err := nodes.get(r.Context(), k.nodeID(obj))
	if err != nil {
		return nil, err
	}
	return k.view(r, obj, nu), nil
}

// schemaDoc keeps the schema's properties of a patched document, as a
// body (Ironic's patched_validate_with_schema prunes the rest).
func (k *volumeKind) schemaDoc(patched map[string]any) (object, error) {
	out := object{}
	for _, p := range k.props {
		v, ok := patched[p.name]
		if !ok {
			continue
		}
		b, err := marshalNoEscape(v)
		if err != nil {
			return nil, err
		}
		out[p.name] = b
	}
	return out, nil
}

// pyStr shows a JSON value as Python's str() would.
func pyStr(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return pyrepr.JSON(raw)
}

func (s *server) updateVolume(r *http.Request, k *volumeKind, n *objects.Node, obj objects.Object) (objects.Object, error) {
	switch o := obj.(type) {
	case *objects.VolumeConnector:
		return s.Conductor.UpdateVolumeConnector(r.Context(), n, o)
	case *objects.VolumeTarget:
		return s.Conductor.UpdateVolumeTarget(r.Context(), n, o)
	}
	return nil, errorf(http.StatusInternalServerError, "no update for %s", k.kind)
}

// deleteVolume serves DELETE /v1/volume/{connectors,targets}/{id}: 204,
// by the node's conductor.
func (s *server) deleteVolume(k *volumeKind, underNode bool) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		obj, err := s.volumeItem(r, k, underNode)
		if err != nil {
			return err
		}
		if err := s.authorizeVolume(r, k, obj, policyVolumeDelete); err != nil {
			return err
		}
		n, err := s.nodeByID(r.Context(), *k.nodeID(obj))
		if err != nil {
			return err
		}
		switch o := obj.(type) {
		case *objects.VolumeConnector:
			err = s.Conductor.DestroyVolumeConnector(r.Context(), n, o)
		case *objects.VolumeTarget:
			err = s.Conductor.DestroyVolumeTarget(r.Context(), n, o)
		}
		if err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}
