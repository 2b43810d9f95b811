package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/core/inspectrules"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/pyrepr"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
)

// v1_96 adds inspection rules.
var v1_96 = version.Version{Major: 1, Minor: 96}

// inspectionRuleFields are the fields Ironic's convert_with_links shows.
var inspectionRuleFields = []string{"uuid", "description", "priority", "sensitive", "phase", "conditions", "actions",
	"created_at", "updated_at", "links"}

// inspectionRuleListFields are Ironic's DEFAULT_RETURN_FIELDS of a list.
var inspectionRuleListFields = []string{"uuid", "priority", "phase", "description"}

// inspectionRuleRoutes registers /v1/inspection_rules (API 1.96) as
// Ironic's InspectionRuleController. The API reads and writes the rules
// in the database directly, as Ironic's does; the conductor reads them
// after each inspection.
func (s *server) inspectionRuleRoutes(h func(pattern string, fn apiFunc)) {
	h("GET /v1/inspection_rules", s.listInspectionRules)
	h("POST /v1/inspection_rules", s.createInspectionRule)
	h("GET /v1/inspection_rules/{ident}", s.getInspectionRule)
	h("PATCH /v1/inspection_rules/{ident}", s.patchInspectionRule)
	h("DELETE /v1/inspection_rules/{ident}", s.deleteInspectionRule)
}

// belowInspectionRules answers a request older than 1.96: GET 404, the
// rest 405, "The API version does not allow inspection rules".
func belowInspectionRules(w http.ResponseWriter, r *http.Request) bool {
	if !VersionFrom(r.Context()).Less(v1_96) {
		return false
	}
	status := http.StatusMethodNotAllowed
	if r.Method == http.MethodGet {
		status = http.StatusNotFound
	}
	writeRoutingError(w, status, "The API version does not allow inspection rules")
	return true
}

func ruleNotFound(ident string) *Error {
	return errorf(http.StatusNotFound, "Rule %s could not be found.", ident)
}

// inspectionRuleView is Ironic's convert_with_links: conditions and
// actions as op, args (and loop, multiple); a sensitive rule's are null
// unless unmasked (for a PATCH's stored document).
func inspectionRuleView(r *http.Request, rule *objects.InspectionRule) map[string]any {
	view := map[string]any{
		"uuid": rule.UUID, "description": strOrNil(rule.Description), "priority": rule.Priority,
		"sensitive": rule.Sensitive, "phase": rule.Phase,
		"conditions": nil, "actions": nil,
		"created_at": isoTime(rule.CreatedAt), "updated_at": isoTimePtr(rule.UpdatedAt),
		"links": resourceLinks(r, "inspection_rules", rule.UUID),
	}
	if !rule.Sensitive {
		view["conditions"], view["actions"] = ruleOps(rule.Conditions, true), ruleOps(rule.Actions, false)
	}
	return view
}

// ruleOps is Ironic's convert_conditions / convert_actions.
func ruleOps(list []map[string]any, conditions bool) []map[string]any {
	out := make([]map[string]any, len(list))
	for i, c := range list {
		m := map[string]any{"op": c["op"], "args": c["args"]}
		if loop := c["loop"]; loop != nil && !isEmptyJSON(loop) {
			m["loop"] = loop
			if conditions {
				m["multiple"] = "any"
				if mu, ok := c["multiple"].(string); ok {
					m["multiple"] = mu
				}
			}
		}
		out[i] = m
	}
	return out
}

func isEmptyJSON(v any) bool {
	switch x := v.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// ruleFields reads ?fields and ?detail as Ironic's get_all and get_one:
// unknown fields 400, ?detail=True with fields 400.
func ruleFields(r *http.Request, list bool) ([]string, error) {
	ss := &stepSet{fields: inspectionRuleFields}
	fields, err := parseStepSetFields(r, ss, list)
	if err != nil || !list {
		return fields, err
	}
	if slices.Equal(fields, stepListFields) { // neither fields nor detail
		return inspectionRuleListFields, nil
	}
	return fields, nil
}

func (s *server) listInspectionRules(w http.ResponseWriter, r *http.Request) error {
	if belowInspectionRules(w, r) {
		return nil
	}
	fields, err := ruleFields(r, true)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	if k := q.Get("sort_key"); k == "actions" || k == "conditions" {
		return errorf(http.StatusBadRequest, "The sort_key value %s is an invalid field for sorting", k)
	}
	pg, err := s.parsePage(r, "InspectionRule")
	if err != nil {
		return err
	}
	var where func(*bun.SelectQuery) *bun.SelectQuery
	if phase := q.Get("phase"); phase != "" {
		where = func(sq *bun.SelectQuery) *bun.SelectQuery { return sq.Where("?TableAlias.phase = ?", phase) }
	}
	objs, err := s.loadPage(r.Context(), "InspectionRule", pg, where, func(m string) error { return ruleNotFound(m) })
	if err != nil {
		return err
	}
	items, last := make([]map[string]any, 0, len(objs)), ""
	for _, o := range objs {
		rule := o.(*objects.InspectionRule)
		items = append(items, selectFields(inspectionRuleView(r, rule), fields))
		last = rule.UUID
	}
	writeCollection(w, "inspection_rules", items, nextURL(r, pg, len(objs), last))
	return nil
}

// loadInspectionRule finds a rule by UUID (Ironic takes no name).
func (s *server) loadInspectionRule(r *http.Request) (*objects.InspectionRule, error) {
	ident := r.PathValue("ident")
	if !isUUID(ident) {
		return nil, errorf(http.StatusBadRequest, "Schema error: %s is not a 'uuid'", pyrepr.Value(ident))
	}
	obj, err := s.Store.Load(r.Context(), "InspectionRule", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.uuid = ?", ident)
	})
	if isNotFound(err) {
		return nil, ruleNotFound(ident)
	}
	if err != nil {
		return nil, err
	}
	return obj.(*objects.InspectionRule), nil
}

func (s *server) getInspectionRule(w http.ResponseWriter, r *http.Request) error {
	if belowInspectionRules(w, r) {
		return nil
	}
	fields, err := ruleFields(r, false)
	if err != nil {
		return err
	}
	rule, err := s.loadInspectionRule(r)
	if err != nil {
		return err
	}
	writeView(w, http.StatusOK, selectFields(inspectionRuleView(r, rule), fields))
	return nil
}

// ruleBodyProps is Ironic's create_request_body, in its order.
var ruleBodyProps = []schemaProp{
	{"actions", ruleOpsSchema(inspectrules.ActionNames, false)},
	{"conditions", ruleOpsSchema(inspectrules.OperatorNames, true)},
	{"description", nullableString(255)},
	{"phase", nullableString(16)},
	{"priority", rulePriority},
	{"sensitive", optionalType("boolean")},
	{"uuid", optionalType("string")},
}

func rulePriority(c *schemaCheck, depth int, v any) {
	if c.typeOK(depth, v, "integer") {
		if jsonNumber(v) < 0 {
			c.add(depth, pyrepr.Value(v)+" is less than the minimum of 0")
		}
	}
}

// ruleOpsSchema is the schema of actions (minItems 1) or conditions:
// objects with op (an enum; conditions also "!op"), args and loop
// (arrays or objects), multiple (conditions: any, all, first, last).
func ruleOpsSchema(ops []string, conditions bool) func(c *schemaCheck, depth int, v any) {
	enum := slices.Clone(ops)
	if conditions {
		for _, op := range ops {
			enum = append(enum, "!"+op)
		}
	}
	return func(c *schemaCheck, depth int, v any) {
		list, ok := v.([]any)
		if !c.typeOK(depth, v, "array") || !ok {
			return
		}
		if !conditions && len(list) == 0 {
			c.add(depth, "[] should be non-empty")
		}
		for _, it := range list {
			m, ok := it.(map[string]any)
			if !ok {
				c.typeOK(depth+1, it, "object")
				continue
			}
			if op, present := m["op"]; present {
				if s, ok := op.(string); !ok || !slices.Contains(enum, s) {
					quoted := make([]string, len(enum))
					for i, e := range enum {
						quoted[i] = "'" + e + "'"
					}
					c.add(depth+2, fmt.Sprintf("%s is not one of [%s]", pyrepr.Value(op), strings.Join(quoted, ", ")))
				}
			}
			for _, k := range []string{"args", "loop"} {
				if a, present := m[k]; present {
					c.typeOK(depth+2, a, "array", "object")
				}
			}
			if mu, present := m["multiple"]; present && conditions {
				if s, _ := mu.(string); s != "any" && s != "all" && s != "first" && s != "last" {
					c.add(depth+2, pyrepr.Value(mu)+" is not one of ['any', 'all', 'first', 'last']")
				}
			}
			for _, r := range []string{"op", "args"} {
				if _, present := m[r]; !present {
					c.add(depth+1, fmt.Sprintf("'%s' is a required property", r))
				}
			}
		}
	}
}

// checkRuleDoc runs Ironic's body schema ("Schema error: …") and then
// validate_rule on a body or patched document.
func checkRuleDoc(doc any) error {
	c := &schemaCheck{}
	obj, ok := doc.(map[string]any)
	if !ok {
		c.typeOK(0, doc, "object")
	} else {
		c.object(0, obj, ruleBodyProps, []string{"actions"})
	}
	if len(c.errs) > 0 {
		best := c.errs[0]
		for _, e := range c.errs[1:] {
			if e.depth < best.depth {
				best = e
			}
		}
		return errorf(http.StatusBadRequest, "Schema error: %s", best.msg)
	}
	if u, ok := obj["uuid"].(string); ok && !isUUID(u) {
		return errorf(http.StatusBadRequest, "Expected UUID for uuid: %s", u)
	}
	if err := inspectrules.Validate(obj, false); err != nil {
		return errorf(http.StatusBadRequest, "%s", err.Error())
	}
	return nil
}

// setRuleFields sets a rule's fields from a checked document.
func setRuleFields(rule *objects.InspectionRule, doc map[string]any) {
	rule.Description = nil
	if d, ok := doc["description"].(string); ok {
		rule.Description = &d
	}
	rule.Phase = inspectrules.PhaseMain
	if p, ok := doc["phase"].(string); ok {
		rule.Phase = p
	}
	rule.Priority, _ = inspectrules.Int(doc["priority"])
	rule.Sensitive, _ = doc["sensitive"].(bool)
	rule.Conditions = docOps(doc["conditions"])
	rule.Actions = docOps(doc["actions"])
}

func docOps(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, it := range list {
		out = append(out, it.(map[string]any))
	}
	return out
}

func (s *server) createInspectionRule(w http.ResponseWriter, r *http.Request) error {
	if belowInspectionRules(w, r) {
		return nil
	}
	var doc any
	if err := readJSON(r, &doc); err != nil {
		return err
	}
	if err := checkRuleDoc(doc); err != nil {
		return err
	}
	body := doc.(map[string]any)
	obj, err := s.reg.New("InspectionRule")
	if err != nil {
		return err
	}
	rule := obj.(*objects.InspectionRule)
	rule.UUID = uuid.NewString()
	if u, ok := body["uuid"].(string); ok {
		rule.UUID = u
	}
	setRuleFields(rule, body)
	if err := s.Store.Create(r.Context(), rule); err != nil {
		if db.IsUniqueViolation(err) {
			return errorf(http.StatusConflict, "A rule with UUID %s already exists.", rule.UUID)
		}
		return err
	}
	w.Header().Set("Location", BaseURL(r)+"/v1/inspection_rules/"+rule.UUID)
	writeView(w, http.StatusCreated, inspectionRuleView(r, rule))
	return nil
}

// patchInspectionRule is Ironic's patch: a sensitive rule cannot be made
// insensitive; the patched document is checked as a body is.
func (s *server) patchInspectionRule(w http.ResponseWriter, r *http.Request) error {
	if belowInspectionRules(w, r) {
		return nil
	}
	ops, err := s.readPatch(r)
	if err != nil {
		return err
	}
	rule, err := s.loadInspectionRule(r)
	if err != nil {
		return err
	}
	for _, op := range ops {
		if op.Path == "/sensitive" && op.Op != "remove" && rule.Sensitive {
			var v any
			_ = json.Unmarshal(op.Value, &v)
			if b, ok := v.(bool); ok && !b {
				var generic any
				raw, _ := json.Marshal(ops)
				_ = decodeJSON(raw, &generic)
				return errorf(http.StatusBadRequest, "Couldn't apply patch '%s'. Reason: Inspection rules cannot have the sensitive flag unset.", pyrepr.Value(generic))
			}
		}
	}
	doc := map[string]any{"uuid": rule.UUID, "description": strOrNil(rule.Description), "priority": json.Number(fmt.Sprint(rule.Priority)),
		"sensitive": rule.Sensitive, "phase": rule.Phase, "conditions": toAnyList(rule.Conditions), "actions": toAnyList(rule.Actions)}
	patched, err := applyPatch(r.Context(), doc, ops)
	if err != nil {
		return err
	}
	var generic any
	if err := roundTrip(patched, &generic); err != nil {
		return err
	}
	if m, ok := generic.(map[string]any); ok {
		for k, v := range m {
			if v == nil && (k == "conditions" || k == "priority" || k == "sensitive") {
				delete(m, k) // a removed field takes its default
			}
		}
	}
	if err := checkRuleDoc(generic); err != nil {
		return err
	}
	m := generic.(map[string]any)
	if u, _ := m["uuid"].(string); u != rule.UUID {
		return errorf(http.StatusBadRequest, "Cannot patch /uuid: the UUID of an inspection rule cannot change")
	}
	setRuleFields(rule, m)
	if changed, err := s.reg.Changed(rule); err != nil {
		return err
	} else if len(changed) > 0 {
		if err := s.Store.Save(r.Context(), rule); err != nil {
			return err
		}
	}
	writeView(w, http.StatusOK, inspectionRuleView(r, rule))
	return nil
}

func toAnyList(list []map[string]any) []any {
	out := make([]any, len(list))
	for i, m := range list {
		out[i] = m
	}
	return out
}

func (s *server) deleteInspectionRule(w http.ResponseWriter, r *http.Request) error {
	if belowInspectionRules(w, r) {
		return nil
	}
	rule, err := s.loadInspectionRule(r)
	if err != nil {
		return err
	}
	if err := s.Store.Delete(r.Context(), rule); err != nil {
		if errors.Is(err, db.ErrNotFound) {
			return ruleNotFound(rule.UUID)
		}
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
