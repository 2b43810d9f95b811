package inspectrules

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Phases are the inspection phases a rule may run in; Ironic knows only
// "main", after the inspection data is processed.
var Phases = []string{"main"}

// PhaseMain is the phase rules run in after in-band inspection.
const PhaseMain = "main"

// ValidationError is a rule Ironic's validate_rule refuses; the API
// answers it with 400.
type ValidationError struct{ Msg string }

func (e *ValidationError) Error() string { return e.Msg }

func invalid(format string, args ...any) error {
	return &ValidationError{Msg: fmt.Sprintf(format, args...)}
}

// Validate is Ironic's validate_rule for a rule document (as decoded from
// JSON: uuid, description, phase, priority, sensitive, conditions,
// actions): the shape of its conditions and actions, its phase, its
// priority (0–9999 unless built in), and each operator's arguments.
func Validate(rule map[string]any, builtIn bool) error {
	if err := checkShape(rule); err != nil {
		return invalid("Validation failed for inspection rule: %s", err)
	}
	var errs []string
	phase := PhaseMain
	if p, ok := rule["phase"].(string); ok {
		phase = p
	}
	if phase != PhaseMain {
		errs = append(errs, fmt.Sprintf("Invalid phase: %s. Valid phases are: %s", phase, strings.Join(Phases, ", ")))
	}
	if prio, ok := Int(rule["priority"]); ok && !builtIn {
		if prio < 0 {
			errs = append(errs, "Priority cannot be negative for user-defined rules.")
		}
		if prio > 9999 {
			errs = append(errs, "Priority must be between 0 and 9999 for user-defined rules.")
		}
	}
	conds, _ := rule["conditions"].([]any)
	for _, c := range conds {
		cond := c.(map[string]any)
		op, _, err := ParseInverted(cond["op"].(string))
		if err != nil {
			return invalid("%v", err)
		}
		sp, ok := operators[op]
		if !ok {
			errs = append(errs, "Unsupported condition operator: "+op)
			continue
		}
		if err := sp.check(cond["args"]); err != nil {
			return invalid("Inspection rule validation failed. Reason: %v", err)
		}
	}
	for _, a := range rule["actions"].([]any) {
		act := a.(map[string]any)
		op := act["op"].(string)
		sp, ok := actions[op]
		if !ok {
			errs = append(errs, "Unsupported action operator: "+op)
			continue
		}
		if err := sp.check(act["args"]); err != nil {
			return invalid("Inspection rule validation failed. Reason: %v", err)
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return invalid("%s", errs[0])
	}
	return invalid("Multiple validation errors occurred: %s", strings.Join(errs, "; "))
}

// checkShape checks what Ironic's create_request_body schema says of
// conditions and actions (the API checks the whole schema first, with
// jsonschema's messages; this guards built-in rules and stored ones).
func checkShape(rule map[string]any) error {
	acts, ok := rule["actions"].([]any)
	if !ok {
		if _, present := rule["actions"]; !present {
			return fmt.Errorf("'actions' is a required property")
		}
		return fmt.Errorf("actions must be a list")
	}
	if len(acts) == 0 {
		return fmt.Errorf("[] should be non-empty")
	}
	check := func(kind string, list []any, known []string, multiple bool) error {
		for _, it := range list {
			m, ok := it.(map[string]any)
			if !ok {
				return fmt.Errorf("each %s must be an object", kind)
			}
			op, ok := m["op"].(string)
			if !ok {
				return fmt.Errorf("'op' is a required property of each %s", kind)
			}
			name := op
			if kind == "condition" {
				name, _, _ = ParseInverted(op)
				if strings.Count(op, "!") > 1 || (strings.HasPrefix(op, "!") && op != "!"+name) {
					return fmt.Errorf("%q is not one of the condition operators (%s, each optionally with a leading !)", op, strings.Join(known, ", "))
				}
			}
			found := false
			for _, k := range known {
				found = found || k == name
			}
			if !found || name != strings.TrimPrefix(op, "!") {
				return fmt.Errorf("%q is not one of the %s operators (%s)", op, kind, strings.Join(known, ", "))
			}
			args, present := m["args"]
			if !present {
				return fmt.Errorf("'args' is a required property of each %s", kind)
			}
			switch args.(type) {
			case []any, map[string]any:
			default:
				return fmt.Errorf("the args of %s %s must be an array or an object", kind, op)
			}
			if l, present := m["loop"]; present {
				switch l.(type) {
				case []any, map[string]any:
				default:
					return fmt.Errorf("the loop of %s %s must be an array or an object", kind, op)
				}
			}
			if mu, present := m["multiple"]; present && multiple {
				if s, _ := mu.(string); s != "any" && s != "all" && s != "first" && s != "last" {
					return fmt.Errorf("multiple must be one of 'any', 'all', 'first', 'last'")
				}
			}
		}
		return nil
	}
	if err := check("action", acts, ActionNames, false); err != nil {
		return err
	}
	if c, present := rule["conditions"]; present && c != nil {
		conds, ok := c.([]any)
		if !ok {
			return fmt.Errorf("conditions must be a list")
		}
		return check("condition", conds, OperatorNames, true)
	}
	return nil
}

// Int reads an integer from a decoded JSON or YAML number.
func Int(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case float64:
		return int64(n), n == math.Trunc(n)
	case int:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}
