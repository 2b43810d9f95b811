package api

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/pyrepr"
	"github.com/rivetmetal/rivet/core/traits"
)

// schemaCheck is the one validator of request bodies against Ironic's
// JSON schemas: it collects the errors python-jsonschema would find, in
// the order it finds them (a schema's properties in its order, then
// required, then additionalProperties), each with jsonschema's message.
// Ironic reports one of them in one of two ways: err, for schemas checked
// with args.schema (jsonschema.validate: best_match), and first, for its
// validation middleware (Draft202012Validator.validate: the first error).
// Only the keywords Ironic's schemas here use are implemented.
type schemaCheck struct {
	errs []schemaFinding
}

type schemaFinding struct {
	depth      int
	weak       bool
	msg, cause string
}

func (c *schemaCheck) add(depth int, msg string) {
	c.errs = append(c.errs, schemaFinding{depth: depth, msg: msg})
}

func (c *schemaCheck) addWeak(depth int, msg, cause string) {
	c.errs = append(c.errs, schemaFinding{depth: depth, weak: true, msg: msg, cause: cause})
}

// err returns Ironic's 400 for the error jsonschema's best_match picks
// ("Schema error for <name>: …"): the shallowest, then one not from anyOf
// (a "weak" keyword), then the first. It is nil when there is none.
func (c *schemaCheck) err(name string) error {
	if len(c.errs) == 0 {
		return nil
	}
	best := c.errs[0]
	for _, e := range c.errs[1:] {
		if e.depth < best.depth || (e.depth == best.depth && best.weak && !e.weak) {
			best = e
		}
	}
	return schemaError(name, best.msg, best.cause)
}

// first returns the message of the first error found (with its possible
// root cause, as Ironic words it), or "" when there is none.
func (c *schemaCheck) first() string {
	if len(c.errs) == 0 {
		return ""
	}
	if e := c.errs[0]; e.cause != "" {
		return e.msg + ". Possible root cause: " + e.cause
	}
	return c.errs[0].msg
}

// jsonType is the jsonschema type name of a decoded JSON value. A number
// with no fractional part (1, 1.0, 1e2) is an "integer": Ironic's schemas
// name no $schema, so jsonschema checks them by its latest draft, where
// (as from draft 6) an integral float is an integer.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number:
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// jsonNumber is a number's value (0 for anything else), for minimum
// checks once jsonType has named its type.
func jsonNumber(v any) float64 {
	n, _ := v.(json.Number)
	f, _ := n.Float64()
	return f
}

// typeOK checks jsonschema's type keyword (one type or several).
func (c *schemaCheck) typeOK(depth int, v any, types ...string) bool {
	if slices.Contains(types, jsonType(v)) {
		return true
	}
	quoted := make([]string, len(types))
	for i, t := range types {
		quoted[i] = "'" + t + "'"
	}
	c.add(depth, fmt.Sprintf("%s is not of type %s", pyrepr.Value(v), strings.Join(quoted, ", ")))
	return false
}

// maxLength checks a string's length in characters.
func (c *schemaCheck) maxLength(depth int, v any, n int) {
	if s, ok := v.(string); ok && len([]rune(s)) > n {
		c.add(depth, pyrepr.Value(v)+" is too long")
	}
}

// object checks an object's required and additional properties after its
// properties (jsonschema's keyword order); props are the schema's
// properties in its order, each checked by its function.
func (c *schemaCheck) object(depth int, obj map[string]any, props []schemaProp, required []string) {
	for _, p := range props {
		if v, ok := obj[p.name]; ok && p.check != nil {
			p.check(c, depth+1, v)
		}
	}
	for _, r := range required {
		if _, ok := obj[r]; !ok {
			c.add(depth, fmt.Sprintf("'%s' is a required property", r))
		}
	}
	var extra []string
	for k := range obj {
		if !slices.ContainsFunc(props, func(p schemaProp) bool { return p.name == k }) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra) // jsonschema sorts the names, then shows their reprs
		for i, k := range extra {
			extra[i] = pyrepr.String(k)
		}
		verb := "was"
		if len(extra) > 1 {
			verb = "were"
		}
		c.add(depth, fmt.Sprintf("Additional properties are not allowed (%s %s unexpected)", strings.Join(extra, ", "), verb))
	}
}

// schemaProp is one property of an object schema.
type schemaProp struct {
	name  string
	check func(c *schemaCheck, depth int, v any)
}

// nullableString is {"type": ["string", "null"], "maxLength": n}.
func nullableString(n int) func(c *schemaCheck, depth int, v any) {
	return func(c *schemaCheck, depth int, v any) {
		if c.typeOK(depth, v, "string", "null") && n > 0 {
			c.maxLength(depth, v, n)
		}
	}
}

// optionalType is {"type": [t, "null"]}.
func optionalType(t string) func(c *schemaCheck, depth int, v any) {
	return func(c *schemaCheck, depth int, v any) { c.typeOK(depth, v, t, "null") }
}

// nullableList is {"type": ["array", "null"], "items": item}.
func nullableList(item func(c *schemaCheck, depth int, v any)) func(c *schemaCheck, depth int, v any) {
	return func(c *schemaCheck, depth int, v any) {
		if list, ok := v.([]any); c.typeOK(depth, v, "array", "null") && ok {
			for _, it := range list {
				item(c, depth+1, it)
			}
		}
	}
}

// traitName is Ironic's TRAITS_SCHEMA.
func traitName(c *schemaCheck, depth int, v any) {
	s, isString := v.(string)
	if !isString {
		c.typeOK(depth, v, "string")
		c.addWeak(depth, pyrepr.Value(v)+" is not valid under any of the given schemas", pyrepr.Value(v)+" is not of type 'string'")
		return
	}
	msg, cause := traits.Problem(s)
	switch {
	case msg == "":
	case cause == "":
		c.add(depth, msg)
	default:
		c.addWeak(depth, msg, cause)
	}
}

var digits = regexp.MustCompile(`^[0-9]+$`)

// stepNumber is a step's priority or order: {"anyOf": [{"type":
// "integer", "minimum": 0}, {"type": "string", "minLength": 1, "pattern":
// "^[0-9]+$"}]}. The cause is the error of the alternative whose type the
// value has, as jsonschema's best_match picks it.
func stepNumber(c *schemaCheck, depth int, v any) {
	var cause string
	switch jsonType(v) {
	case "integer":
		if jsonNumber(v) >= 0 {
			return
		}
		cause = pyrepr.Value(v) + " is less than the minimum of 0"
	case "string":
		switch x := v.(string); {
		case x == "":
			cause = "'' should be non-empty"
		case !digits.MatchString(x):
			cause = pyrepr.Value(v) + " does not match '^[0-9]+$'"
		default:
			return
		}
	default:
		cause = pyrepr.Value(v) + " is not of type 'integer'"
	}
	c.addWeak(depth, pyrepr.Value(v)+" is not valid under any of the given schemas", cause)
}

// stepsSchema is Ironic's DEPLOY_STEP_SCHEMA or RUNBOOK_STEP_SCHEMA: the
// step's interface among interfaces, its number under numberKey
// ("priority" or "order"), and the required keys.
type stepsSchema struct {
	interfaces []string
	numberKey  string
	required   []string
}

// check is {"type": "array", "items": <step>, "minItems": 1}.
func (ss stepsSchema) check(c *schemaCheck, depth int, v any) {
	if !c.typeOK(depth, v, "array") {
		return
	}
	items := v.([]any)
	for _, it := range items {
		ss.step(c, depth+1, it)
	}
	if len(items) == 0 {
		c.add(depth, "[] should be non-empty")
	}
}

// step checks one step object.
func (ss stepsSchema) step(c *schemaCheck, depth int, v any) {
	if !c.typeOK(depth, v, "object") {
		return
	}
	props := []schemaProp{
		{"args", func(c *schemaCheck, d int, v any) { c.typeOK(d, v, "object") }},
		{"interface", func(c *schemaCheck, d int, v any) {
			c.typeOK(d, v, "string")
			if s, ok := v.(string); !ok || !slices.Contains(ss.interfaces, s) {
				quoted := make([]string, len(ss.interfaces))
				for i, f := range ss.interfaces {
					quoted[i] = "'" + f + "'"
				}
				c.add(d, fmt.Sprintf("%s is not one of [%s]", pyrepr.Value(v), strings.Join(quoted, ", ")))
			}
		}},
		{ss.numberKey, stepNumber},
		{"step", func(c *schemaCheck, d int, v any) {
			if c.typeOK(d, v, "string") && v.(string) == "" {
				c.add(d, "'' should be non-empty")
			}
		}},
	}
	if ss.numberKey == "order" { // RUNBOOK_STEP_SCHEMA lists step before order
		props[2], props[3] = props[3], props[2]
	}
	c.object(depth, v.(map[string]any), props, ss.required)
}

// duplicateSteps is Ironic's duplicate_steps check: one step per
// interface and step name (its message speaks of deploy templates for
// runbooks too, as Ironic's does).
func duplicateSteps(steps []any) error {
	seen := map[[2]string]int{}
	var dups []string
	for _, it := range steps {
		st, _ := it.(map[string]any)
		iface, _ := st["interface"].(string)
		name, _ := st["step"].(string)
		k := [2]string{iface, name}
		seen[k]++
		if seen[k] == 2 {
			dups = append(dups, fmt.Sprintf("interface: %s, step: %s", iface, name))
		}
	}
	if len(dups) == 0 {
		return nil
	}
	return errorf(http.StatusBadRequest, "Deploy template invalid: Duplicate deploy steps. A template cannot have multiple "+
		"deploy steps with the same interface and step. Duplicates: %s.", strings.Join(dups, "; "))
}
