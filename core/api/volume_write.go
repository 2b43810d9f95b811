package api

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"sort"
	"strings"

	"github.com/google/uuid"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/db"
)

// maxVolumeString is the width of the volume tables' string columns: a
// longer value is refused with 400 rather than failing in the database.
const maxVolumeString = 255

// jsonType is the JSON schema type of a raw value; an integral number is
// "integer" (Draft 2020-12, which Ironic validates with).
func rawJSONType(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "null"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil && f == math.Trunc(f) && !math.IsInf(f, 0) {
		return "integer"
	}
	return "number"
}

// pyValue is Python's repr of a decoded JSON value, as jsonschema's
// messages show it.
func rawPyValue(raw json.RawMessage) string {
	var s string
	if rawJSONType(raw) == "string" && json.Unmarshal(raw, &s) == nil {
		return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
	}
	return pyRepr(raw)
}

// checkSchema validates a volume body (create) or a patched document
// (update) as Ironic's jsonschema does: a missing required property first,
// then properties the schema lacks, then a property of the wrong type; the
// message names the argument ("connector", "target" or "patch"). String
// values longer than the columns are refused too.
func (k *volumeKind) checkSchema(arg string, body object) error {
	fail := func(format string, args ...any) error {
		return errorf(http.StatusBadRequest, "Schema error for %s: "+format, append([]any{arg}, args...)...)
	}
	for _, req := range k.required {
		if _, ok := body[req]; !ok {
			return fail("'%s' is a required property", req)
		}
	}
	known := map[string]bool{}
	for _, p := range k.props {
		known[p.name] = true
	}
	var extra []string
	for key := range body {
		if !known[key] {
			extra = append(extra, "'"+key+"'")
		}
	}
	sort.Strings(extra)
	switch len(extra) {
	case 0:
	case 1:
		return fail("Additional properties are not allowed (%s was unexpected)", extra[0])
	default:
		return fail("Additional properties are not allowed (%s were unexpected)", strings.Join(extra, ", "))
	}
	for _, p := range k.props {
		raw, ok := body[p.name]
		if !ok {
			continue
		}
		if !contains(p.types, rawJSONType(raw)) {
			return fail("%s is not of type %s", rawPyValue(raw), quotedList(p.types))
		}
		var s string
		if rawJSONType(raw) == "string" && json.Unmarshal(raw, &s) == nil && len(s) > maxVolumeString {
			return errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: '%s'. Longer than %d characters.",
				p.name, s, maxVolumeString)
		}
		if rawJSONType(raw) == "integer" {
			var n float64
			if json.Unmarshal(raw, &n) != nil || math.Abs(n) > math.MaxInt32 {
				return fail("%s is out of range", string(raw))
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
	return pyRepr(raw)
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
