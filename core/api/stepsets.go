package api

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/uptrace/bun"
)

// stepSet describes a named set of steps served as an Ironic resource:
// deploy templates (1.55) and runbooks (1.92) share uuid, name (a trait),
// steps and extra, their validation, views, paging and errors, and differ
// in what this table says. The API reads and writes them in the database
// directly, as Ironic's API does.
type stepSet struct {
	kind       string          // object kind: "DeployTemplate"
	collection string          // path segment and list key: "deploy_templates"
	since      version.Version // first microversion
	plural     string          // "deploy templates", in "The API version does not allow …"
	noun       string          // "Deploy template", in "… X could not be found."
	lower      string          // "deploy template", in "A … with name X already exists."
	arg        string          // the body's name in schema errors: "template"
	identArg   string          // the path identifier's name: "template_ident"
	steps      stepsSchema
	props      []schemaProp // the body schema's properties, in Ironic's order
	required   []string
	fields     []string // API fields, links last
	patchable  []string // in the order of Ironic's "Only the following can be updated"
	// apply sets kind-specific attributes from a validated body (create)
	// or patched document; nil when there are none.
	apply func(obj objects.Object, doc map[string]any) error
	// checkPatch refuses a PATCH for kind-specific reasons, and may
	// change the stored document before the patch applies; nil when there
	// are none.
	checkPatch func(ops []patchOp, doc map[string]any) error
	// access is the kind's project-scoped access control; nil when the
	// kind is the system's alone (the route policies decide).
	access *stepSetAccess
}

var stepListFields = []string{"uuid", "name"}

// below answers a request older than the resource as Ironic does: GET is
// 404, other methods 405, both saying the version does not allow it.
func (ss *stepSet) below(w http.ResponseWriter, r *http.Request) bool {
	if !VersionFrom(r.Context()).Less(ss.since) {
		return false
	}
	msg := "The API version does not allow " + ss.plural
	if r.Method == http.MethodGet {
		writeRoutingError(w, http.StatusNotFound, msg)
	} else {
		writeRoutingError(w, http.StatusMethodNotAllowed, msg)
	}
	return true
}

// view is the resource as Ironic shows it, step args masked.
func (s *server) stepSetView(r *http.Request, ss *stepSet, obj objects.Object) (map[string]any, error) {
	vals, err := s.reg.Values(obj)
	if err != nil {
		return nil, err
	}
	view := map[string]any{}
	for _, f := range ss.fields {
		switch f {
		case "links":
			view[f] = resourceLinks(r, ss.collection, vals["uuid"].(string))
		case "created_at":
			view[f] = isoTime(vals[f].(time.Time))
		case "updated_at":
			view[f] = isoTimePtr(vals[f].(*time.Time))
		case "extra":
			view[f] = maskDict(orEmpty(vals[f].(map[string]any)))
		case "steps":
			view[f] = stepsView(vals[f].([]map[string]any), ss.steps.numberKey)
		case "owner":
			view[f] = strOrNil(vals[f].(*string))
		default:
			view[f] = vals[f]
		}
	}
	return view, nil
}

// stepsView shows steps as Ironic's convert_steps: interface, step, args
// (masked) and the priority or order.
func stepsView(steps []map[string]any, numberKey string) []map[string]any {
	out := make([]map[string]any, len(steps))
	for i, st := range steps {
		args, _ := st["args"].(map[string]any)
		out[i] = map[string]any{"interface": st["interface"], "step": st["step"], "args": maskDict(orEmpty(args)),
			numberKey: st[numberKey]}
	}
	return out
}

// parseStepSetFields reads ?fields and ?detail of a list (list) or a GET:
// unknown fields 400 with Ironic's message, ?detail=True with ?fields 400.
// nil means every field.
func parseStepSetFields(r *http.Request, ss *stepSet, list bool) ([]string, error) {
	q := r.URL.Query()
	var fields []string
	if raw, ok := q["fields"]; ok {
		var invalid []string
		for _, item := range raw {
			for _, f := range strings.Split(item, ",") {
				if f = strings.TrimSpace(f); f == "" {
					continue
				}
				if !slices.Contains(ss.fields, f) {
					invalid = append(invalid, f)
				}
				fields = append(fields, f)
			}
		}
		if len(invalid) > 0 {
			return nil, errorf(http.StatusBadRequest, "Field(s) \"%s\" are not valid", strings.Join(invalid, ", "))
		}
		if fields == nil {
			fields = []string{}
		}
	}
	if !list {
		return fields, nil
	}
	detail := false
	if d := q.Get("detail"); q.Has("detail") {
		b, err := parseBool("detail", d)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "Invalid detail: Unrecognized value '%s', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'", d)
		}
		detail = b
	}
	switch {
	case fields != nil && detail:
		return nil, errorf(http.StatusBadRequest, "Can not specify ?detail=True and fields in the same request.")
	case fields == nil && !detail:
		return stepListFields, nil
	}
	return fields, nil
}

// listStepSets serves GET /v1/<collection>: uuid and name (and links) by
// default, everything with ?detail=True, or ?fields; paged.
func (s *server) listStepSets(ss *stepSet) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if ss.below(w, r) {
			return nil
		}
		fields, err := parseStepSetFields(r, ss, true)
		if err != nil {
			return err
		}
		if k := r.URL.Query().Get("sort_key"); k == "steps" || k == "traits" {
			return errorf(http.StatusBadRequest, "The sort_key value %s is an invalid field for sorting", k)
		}
		pg, err := s.parsePage(r, ss.kind)
		if err != nil {
			return err
		}
		var scope func(*bun.SelectQuery) *bun.SelectQuery
		if ss.access != nil {
			scope = ss.access.list(r)
		}
		objs, err := s.loadPage(r.Context(), ss.kind, pg, scope, func(m string) error { return ss.notFound(m) })
		if err != nil {
			return err
		}
		items, last := make([]map[string]any, 0, len(objs)), ""
		for _, o := range objs {
			view, err := s.stepSetView(r, ss, o)
			if err != nil {
				return err
			}
			items = append(items, selectFields(view, fields))
			last = view["uuid"].(string)
		}
		writeCollection(w, ss.collection, items, nextURL(r, pg, len(objs), last))
		return nil
	}
}

func (ss *stepSet) notFound(ident string) *Error {
	return errorf(http.StatusNotFound, "%s %s could not be found.", ss.noun, ident)
}

// load finds a resource by UUID or name, as Ironic's get_rpc_<kind>.
func (s *server) loadStepSet(r *http.Request, ss *stepSet) (objects.Object, error) {
	ident := r.PathValue("ident")
	col := "uuid"
	if !isUUID(ident) {
		if !validLogicalName(ident, VersionFrom(r.Context())) {
			return nil, errorf(http.StatusBadRequest, "Expected UUID or name for %s: %s", ss.identArg, ident)
		}
		col = "name"
	}
	obj, err := s.Store.Load(r.Context(), ss.kind, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.? = ?", bun.Ident(col), ident)
	})
	if isNotFound(err) {
		return nil, ss.notFound(ident)
	}
	return obj, err
}

// getStepSet serves GET /v1/<collection>/{ident} (?fields).
func (s *server) getStepSet(ss *stepSet) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if ss.below(w, r) {
			return nil
		}
		fields, err := parseStepSetFields(r, ss, false)
		if err != nil {
			return err
		}
		obj, err := s.loadStepSet(r, ss)
		if err != nil {
			return err
		}
		if err := ss.access.check(r, accessGet, obj, nil); err != nil {
			return err
		}
		view, err := s.stepSetView(r, ss, obj)
		if err != nil {
			return err
		}
		writeView(w, http.StatusOK, selectFields(view, fields))
		return nil
	}
}

// validateStepSet runs Ironic's checks of a body or patched document:
// the schema (errors named name), duplicate steps, a UUID.
func (ss *stepSet) validate(name string, doc any) error {
	c := &schemaCheck{}
	if obj, ok := doc.(map[string]any); !ok {
		c.typeOK(0, doc, "object")
	} else {
		c.object(0, obj, ss.props, ss.required)
	}
	if err := c.err(name); err != nil {
		return err
	}
	obj := doc.(map[string]any)
	if err := duplicateSteps(obj["steps"].([]any)); err != nil {
		return err
	}
	if u, ok := obj["uuid"].(string); ok && !isUUID(u) {
		return errorf(http.StatusBadRequest, "Expected UUID for uuid: %s", u)
	}
	return nil
}

// setCommon sets name, steps (priorities and orders as numbers, as
// Ironic's database returns them) and extra from a validated document.
func (s *server) setStepSetCommon(ss *stepSet, obj objects.Object, doc map[string]any) error {
	steps := make([]map[string]any, 0, len(doc["steps"].([]any)))
	for _, it := range doc["steps"].([]any) {
		st := it.(map[string]any)
		out := map[string]any{"interface": st["interface"], "step": st["step"], "args": orEmpty(asMap(st["args"]))}
		out[ss.steps.numberKey] = st[ss.steps.numberKey]
		switch n := st[ss.steps.numberKey].(type) {
		case string: // "42": schema-checked digits
			if n = strings.TrimLeft(n, "0"); n == "" {
				n = "0"
			}
			out[ss.steps.numberKey] = json.Number(n)
		case json.Number: // 1.0, 1e2: schema-checked integral, not negative; Ironic's column holds 1, 100
			if _, err := n.Int64(); err != nil {
				out[ss.steps.numberKey] = json.Number(strconv.FormatFloat(math.Abs(jsonNumber(n)), 'f', -1, 64))
			}
		}
		steps = append(steps, out)
	}
	for field, val := range map[string]any{"name": doc["name"], "steps": steps, "extra": orEmpty(asMap(doc["extra"]))} {
		if err := s.reg.Set(obj, field, val); err != nil {
			return err
		}
	}
	if ss.apply != nil {
		return ss.apply(obj, doc)
	}
	return nil
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// createStepSet serves POST /v1/<collection>: 201 with a Location.
func (s *server) createStepSet(ss *stepSet) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if ss.below(w, r) {
			return nil
		}
		var doc any
		if err := readJSON(r, &doc); err != nil {
			return err
		}
		if err := ss.validate(ss.arg, doc); err != nil {
			return err
		}
		body := doc.(map[string]any)
		if err := ss.access.create(r, body); err != nil {
			return err
		}
		obj, err := s.reg.New(ss.kind)
		if err != nil {
			return err
		}
		id := uuid.NewString()
		if u, ok := body["uuid"].(string); ok {
			id = u
		}
		if err := s.reg.Set(obj, "uuid", id); err != nil {
			return err
		}
		if err := s.setStepSetCommon(ss, obj, body); err != nil {
			return err
		}
		if err := s.uniqueStepSet(r.Context(), ss, obj, 0); err != nil {
			return err
		}
		if err := s.Store.Create(r.Context(), obj); err != nil {
			return s.stepSetWriteError(ss, obj, err)
		}
		view, err := s.stepSetView(r, ss, obj)
		if err != nil {
			return err
		}
		w.Header().Set("Location", BaseURL(r)+"/v1/"+ss.collection+"/"+id)
		writeView(w, http.StatusCreated, view)
		return nil
	}
}

// uniqueStepSet answers 409 for a UUID or name another row (not id) has.
func (s *server) uniqueStepSet(ctx context.Context, ss *stepSet, obj objects.Object, id int64) error {
	table := db.ObjectTables()[ss.kind]
	for _, col := range []string{"uuid", "name"} {
		val, err := s.reg.Get(obj, col)
		if err != nil {
			return err
		}
		taken, err := s.taken(ctx, table, col, val.(string), id)
		if err != nil {
			return err
		}
		if taken {
			return ss.conflict(col, val.(string))
		}
	}
	return nil
}

func (ss *stepSet) conflict(col, val string) *Error {
	if col == "uuid" {
		return errorf(http.StatusConflict, "A %s with UUID %s already exists.", ss.lower, val)
	}
	return errorf(http.StatusConflict, "A %s with name %s already exists.", ss.lower, val)
}

// stepSetWriteError turns a unique violation that raced the check into
// the 409 for the name.
func (s *server) stepSetWriteError(ss *stepSet, obj objects.Object, err error) error {
	if db.IsUniqueViolation(err) {
		name, _ := s.reg.Get(obj, "name")
		return ss.conflict("name", name.(string))
	}
	return err
}

// patchStepSet serves PATCH /v1/<collection>/{ident}: Ironic's allowed
// fields, the patch applied to the stored document, which is then checked
// as a body is (errors named "patch"), and saved.
func (s *server) patchStepSet(ss *stepSet) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if ss.below(w, r) {
			return nil
		}
		ops, err := s.readPatch(r)
		if err != nil {
			return err
		}
		for _, op := range ops {
			if !slices.Contains(ss.patchable, op.root()) {
				return errorf(http.StatusBadRequest, "Cannot patch %s. Only the following can be updated: %s", op.Path, strings.Join(ss.patchable, ", "))
			}
		}
		obj, err := s.loadStepSet(r, ss)
		if err != nil {
			return err
		}
		if err := ss.access.check(r, accessUpdate, obj, ops); err != nil {
			return err
		}
		doc, err := s.stepSetDoc(ss, obj)
		if err != nil {
			return err
		}
		if err := (patchRules{allowed: ss.patchable}).check(ops, doc, VersionFrom(r.Context())); err != nil {
			return err
		}
		if ss.checkPatch != nil {
			if err := ss.checkPatch(ops, doc); err != nil {
				return err
			}
		}
		patched, err := applyPatch(r.Context(), doc, ops)
		if err != nil {
			return err
		}
		var generic any
		if err := roundTrip(patched, &generic); err != nil {
			return err
		}
		if steps, ok := generic.(map[string]any)["steps"].([]any); ok {
			for _, st := range steps {
				if m, ok := st.(map[string]any); ok {
					pruneTo(m, "args", "interface", "step", ss.steps.numberKey)
				}
				c := &schemaCheck{}
				ss.steps.step(c, 0, st)
				if err := c.err("patch"); err != nil {
					return err
				}
			}
		}
		props := make([]string, len(ss.props))
		for i, p := range ss.props {
			props[i] = p.name
		}
		pruneTo(generic.(map[string]any), props...)
		if err := ss.validate("patch", generic); err != nil {
			return err
		}
		if err := s.setStepSetCommon(ss, obj, generic.(map[string]any)); err != nil {
			return err
		}
		id, _ := s.reg.Get(obj, "id")
		if err := s.uniqueStepSet(r.Context(), ss, obj, id.(int64)); err != nil {
			return err
		}
		if changed, err := s.reg.Changed(obj); err != nil {
			return err
		} else if len(changed) > 0 {
			if err := s.Store.Save(r.Context(), obj); err != nil {
				return s.stepSetWriteError(ss, obj, err)
			}
		}
		view, err := s.stepSetView(r, ss, obj)
		if err != nil {
			return err
		}
		writeView(w, http.StatusOK, view)
		return nil
	}
}

// stepSetDoc is the stored document a PATCH applies to (Ironic's
// as_dict): the object's fields, unmasked.
func (s *server) stepSetDoc(ss *stepSet, obj objects.Object) (map[string]any, error) {
	vals, err := s.reg.Values(obj)
	if err != nil {
		return nil, err
	}
	doc := map[string]any{}
	for _, f := range ss.fields {
		switch f {
		case "links", "created_at", "updated_at":
		case "steps":
			steps := make([]any, 0)
			for _, st := range vals["steps"].([]map[string]any) {
				steps = append(steps, st)
			}
			doc[f] = steps
		case "owner":
			doc[f] = strOrNil(vals[f].(*string))
		default:
			doc[f] = vals[f]
		}
	}
	return doc, nil
}

// pruneTo drops the keys of m not in keep (Ironic's
// patched_validate_with_schema drops what its schema does not list).
func pruneTo(m map[string]any, keep ...string) {
	for k := range m {
		if !slices.Contains(keep, k) {
			delete(m, k)
		}
	}
}

// roundTrip re-decodes v (a patched document) into out with numbers as
// json.Number, as a request body decodes.
func roundTrip(v any, out *any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return decodeJSON(b, out)
}

// deleteStepSet serves DELETE /v1/<collection>/{ident}: 204.
func (s *server) deleteStepSet(ss *stepSet) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if ss.below(w, r) {
			return nil
		}
		obj, err := s.loadStepSet(r, ss)
		if err != nil {
			return err
		}
		if err := ss.access.check(r, accessDelete, obj, nil); err != nil {
			return err
		}
		if err := s.Store.Delete(r.Context(), obj); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// routes registers the resource's collection and items.
func (ss *stepSet) routes(s *server, h func(pattern string, fn apiFunc)) {
	base := "/v1/" + ss.collection
	h("GET "+base, s.listStepSets(ss))
	h("POST "+base, s.createStepSet(ss))
	h("GET "+base+"/{ident}", s.getStepSet(ss))
	h("PATCH "+base+"/{ident}", s.patchStepSet(ss))
	h("DELETE "+base+"/{ident}", s.deleteStepSet(ss))
}
