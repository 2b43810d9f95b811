package inspectrules

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/plugins/redact"
)

// Rule is a rule as the engine runs it: a stored one or a built-in one.
type Rule struct {
	UUID       string
	Priority   int64
	Sensitive  bool
	Conditions []map[string]any
	Actions    []map[string]any
}

// Target is an object actions change (the node, or one of its ports):
// its fields by name as decoded JSON (dicts as map[string]any), never
// changed in place.
type Target interface {
	// Fields are the object's fields, for interpolation ({node.uuid}).
	Fields() map[string]any
	// Set sets a field; Reset puts it back to its default.
	Set(field string, v any) error
	Reset(field string) error
}

// Env is what the engine works on besides the data: the node, its ports
// and traits, and the log.
type Env interface {
	Node() Target
	// Port returns the node's port with this UUID; PortNotFound otherwise.
	Port(uuid string) (Target, error)
	AddTrait(name string) error
	// RemoveTrait reports whether the node had the trait.
	RemoveTrait(name string) (bool, error)
	Log(level, msg string)
}

// SensitiveFields are masked in the data rules see (Ironic's
// SENSITIVE_FIELDS), at any depth.
var SensitiveFields = []string{"password", "auth_token", "bmc_password"}

// MaskSecrets values: Ironic's [inspection_rules] mask_secrets.
const (
	MaskAlways    = "always"
	MaskNever     = "never"
	MaskSensitive = "sensitive"
)

// ExecError is a rule failing: inspection fails with its message.
type ExecError struct{ Msg string }

func (e *ExecError) Error() string { return e.Msg }

func actionFailure(format string, args ...any) error {
	return &ExecError{Msg: "Inspection rule action execution failed. Reason: " + fmt.Sprintf(format, args...)}
}

// Apply is Ironic's apply_rules: rules (stored and built-in together) run
// highest priority first (stable for equal priorities); a rule whose
// conditions all hold runs its actions in order. Inventory and plugin
// data are masked per maskSecrets for conditions and interpolation;
// plugin-data actions change pluginData itself. The first failure stops
// everything and is returned.
func Apply(env Env, rules []Rule, inventory, pluginData map[string]any, maskSecrets, nodeUUID string) error {
	sorted := slices.Clone(rules)
	slices.SortStableFunc(sorted, func(a, b Rule) int {
		switch {
		case a.Priority > b.Priority:
			return -1
		case a.Priority < b.Priority:
			return 1
		}
		return 0
	})
	for _, r := range sorted {
		mask := maskSecrets == MaskAlways || maskSecrets == "" || (maskSecrets == MaskSensitive && !r.Sensitive)
		inv, pd := inventory, pluginData
		if mask {
			inv, _ = masked(inventory).(map[string]any)
			pd, _ = masked(pluginData).(map[string]any)
		}
		rc := &run{env: env, inv: inv, pd: pd, realPD: pluginData, maskNode: mask}
		ok, err := rc.conditions(r)
		if err == nil && ok {
			env.Log("info", fmt.Sprintf("Applying actions for rule %s to node %s", r.UUID, nodeUUID))
			err = rc.actions(r)
		}
		if err != nil {
			var ee *ExecError
			if errors.As(err, &ee) {
				return err
			}
			return &ExecError{Msg: fmt.Sprintf("Failed to apply rule %s to node %s: %v", r.UUID, nodeUUID, err)}
		}
	}
	return nil
}

// masked is a deep copy of v with the sensitive keys' values "***".
func masked(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if slices.Contains(SensitiveFields, k) {
				out[k] = "***"
			} else {
				out[k] = masked(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = masked(e)
		}
		return out
	}
	return v
}

type run struct {
	env     Env
	inv, pd map[string]any
	realPD  map[string]any
	// maskNode masks the node's secrets (BMC passwords, tokens, URL
	// credentials) in what rules see, as the data's are: Rivet never puts
	// them in logs, and a rule's log action or failure message would.
	maskNode bool
}

func (rc *run) context(loop map[string]any) map[string]any {
	node := rc.env.Node().Fields()
	if rc.maskNode {
		node = redact.Dict(node)
	}
	ctx := map[string]any{"node": node, "inventory": rc.inv, "plugin_data": rc.pd}
	for k, v := range loop {
		ctx[k] = v
	}
	return ctx
}

// args is Ironic's _process_args: named arguments, those the operator
// formats (all of them inside a loop) interpolated.
func (rc *run) args(sp opSpec, op string, raw any, loop map[string]any) (map[string]any, error) {
	named, err := sp.normalize(raw)
	if err != nil {
		return nil, err
	}
	ctx := rc.context(loop)
	warn := func(msg string) { rc.env.Log("warning", msg) }
	for k, v := range named {
		if loop != nil {
			// Ironic formats a string argument twice in a loop: "{item}"
			// becomes the item, and the item's own fields are filled in.
			if s, ok := v.(string); ok {
				v = interpolate(s, ctx, op, warn)
			}
		}
		if loop != nil || slices.Contains(sp.formatted, k) {
			named[k] = interpolate(v, ctx, op, warn)
		}
	}
	return named, nil
}

// loops returns the loop contexts of a condition or action: nil for none
// (no loop), one per item of a list, one for a dict.
func loops(m map[string]any) ([]map[string]any, bool) {
	switch l := m["loop"].(type) {
	case []any:
		if len(l) == 0 {
			return nil, false
		}
		out := make([]map[string]any, len(l))
		for i, it := range l {
			out[i] = map[string]any{"item": it}
		}
		return out, true
	case map[string]any:
		if len(l) == 0 {
			return nil, false
		}
		return []map[string]any{{"item": l}}, true
	}
	return nil, false
}

func (rc *run) conditions(r Rule) (bool, error) {
	for _, c := range r.Conditions {
		opStr, _ := c["op"].(string)
		op, inverted, err := ParseInverted(opStr)
		if err != nil {
			return false, err
		}
		sp, ok := operators[op]
		if !ok {
			return false, fmt.Errorf("Unsupported operator: '%s'. Supported operators are: %s.", op, strings.Join(OperatorNames, ", "))
		}
		check := func(loop map[string]any) (bool, error) {
			a, err := rc.args(sp, op, c["args"], loop)
			if err != nil {
				return false, err
			}
			if loop != nil && slices.Contains(sp.optional, "force_strings") {
				a["force_strings"] = true
			}
			res, err := evalOperator(op, a)
			return res != inverted, err
		}
		items, isLoop := loops(c)
		var result bool
		if !isLoop {
			if result, err = check(nil); err != nil {
				return false, err
			}
		} else {
			multiple, _ := c["multiple"].(string)
			if multiple == "" {
				multiple = "any"
			}
			var results []bool
			if _, isDict := c["loop"].(map[string]any); isDict {
				res, err := check(items[0])
				if err != nil {
					return false, err
				}
				results = []bool{res}
			} else {
				for _, it := range items {
					res, err := check(it)
					if err != nil {
						return false, err
					}
					if multiple == "first" && res {
						results = []bool{true}
						break
					}
					if multiple == "last" {
						results = []bool{res}
					} else {
						results = append(results, res)
					}
				}
			}
			switch multiple {
			case "any":
				result = slices.Contains(results, true)
			case "all":
				result = !slices.Contains(results, false)
			default:
				result = len(results) > 0 && results[0]
			}
		}
		if !result {
			return false, nil
		}
	}
	return true, nil
}

func (rc *run) actions(r Rule) error {
	for _, a := range r.Actions {
		op, _ := a["op"].(string)
		sp, ok := actions[op]
		if !ok {
			return fmt.Errorf("Unsupported action: '%s'. Supported actions are: %s.", op, strings.Join(ActionNames, ", "))
		}
		items, isLoop := loops(a)
		if !isLoop {
			items = []map[string]any{nil}
		}
		for _, loop := range items {
			args, err := rc.args(sp, op, a["args"], loop)
			if err != nil {
				return err
			}
			if err := rc.act(op, args); err != nil {
				return err
			}
		}
	}
	return nil
}

// evalOperator runs one condition operator on its arguments.
func evalOperator(op string, a map[string]any) (bool, error) {
	switch op {
	case "eq", "lt", "gt":
		values, ok := a["values"].([]any)
		if !ok {
			return false, &ExecError{Msg: fmt.Sprintf("Inspection rule condition check failed. Reason: Failed to check condition: '%s' on values: %s: Expected list for 'values', got: %s",
				op, PyStr(a["values"]), pyType(a["values"]))}
		}
		if fs, _ := a["force_strings"].(bool); fs {
			strs := make([]any, len(values))
			for i, v := range values {
				strs[i] = PyStr(v)
			}
			values = strs
		}
		for i := 0; i+1 < len(values); i++ {
			var ok bool
			var err error
			switch op {
			case "eq":
				ok = pyEqual(values[i], values[i+1])
			case "lt":
				ok, err = pyLess(values[i], values[i+1], "<")
			case "gt":
				ok, err = pyLess(values[i+1], values[i], ">")
			}
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case "is-empty":
		s := PyStr(a["value"])
		return s == "" || s == "None" || s == "[]" || s == "{}", nil
	case "in-net":
		subnet := PyStr(a["subnet"])
		_, network, err := net.ParseCIDR(subnet)
		if err != nil {
			ip := net.ParseIP(subnet)
			if ip == nil {
				return false, &ExecError{Msg: fmt.Sprintf("Inspection rule execution failed. Reason: invalid value: invalid IPNetwork %s", subnet)}
			}
			network = &net.IPNet{IP: ip, Mask: net.CIDRMask(len(ip)*8, len(ip)*8)}
			if ip4 := ip.To4(); ip4 != nil {
				network = &net.IPNet{IP: ip4, Mask: net.CIDRMask(32, 32)}
			}
		}
		addr := net.ParseIP(PyStr(a["address"]))
		if addr == nil {
			return false, fmt.Errorf("AddrFormatError: failed to detect a valid IP address from %s", pyRepr(a["address"]))
		}
		return network.Contains(addr), nil
	case "matches", "contains":
		regex := PyStr(a["regex"])
		if op == "matches" && !strings.HasSuffix(regex, "$") {
			regex += "$"
		}
		pattern := regex
		if op == "matches" {
			pattern = `\A(?:` + regex + `)`
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return false, &ExecError{Msg: fmt.Sprintf("Inspection rule execution failed. Reason: invalid regular expression: %v", err)}
		}
		return re.MatchString(PyStr(a["value"])), nil
	case "one-of":
		switch vs := a["values"].(type) {
		case []any:
			return slices.ContainsFunc(vs, func(x any) bool { return pyEqual(a["value"], x) }), nil
		case string:
			s, ok := a["value"].(string)
			if !ok {
				return false, fmt.Errorf("TypeError: 'in <string>' requires string as left operand, not %s", pyType(a["value"]))
			}
			return strings.Contains(vs, s), nil
		case map[string]any:
			s, ok := a["value"].(string)
			_, found := vs[s]
			return ok && found, nil
		case nil:
			return false, nil
		}
		return false, fmt.Errorf("TypeError: argument of type '%s' is not iterable", pyType(a["values"]))
	case "is-none":
		return a["value"] == nil, nil
	case "is-true":
		switch v := a["value"].(type) {
		case bool:
			return v, nil
		case string:
			l := strings.ToLower(v)
			return l == "yes" || l == "true", nil
		}
		if f, ok := number(a["value"]); ok {
			return f != 0, nil
		}
		return false, nil
	case "is-false":
		switch v := a["value"].(type) {
		case bool:
			return !v, nil
		case string:
			l := strings.ToLower(v)
			return l == "no" || l == "false", nil
		case nil:
			return true, nil
		}
		if f, ok := number(a["value"]); ok {
			return f == 0, nil
		}
		return false, nil
	}
	return false, fmt.Errorf("Unsupported operator '%s'.", op)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case bool:
		if n {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// pyEqual is Python's == on decoded JSON: numbers (and booleans) by
// value, strings, lists and dicts deeply; other mixes are unequal.
func pyEqual(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, found := y[k]
			if !found || !pyEqual(v, w) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// pyLess is Python's a < b: numbers, strings and lists; any other mix is
// Python's TypeError.
func pyLess(a, b any, sym string) (bool, error) {
	if fa, ok := number(a); ok {
		if fb, ok := number(b); ok {
			return fa < fb, nil
		}
	}
	if sa, ok := a.(string); ok {
		if sb, ok := b.(string); ok {
			return sa < sb, nil
		}
	}
	if la, ok := a.([]any); ok {
		if lb, ok := b.([]any); ok {
			for i := 0; i < len(la) && i < len(lb); i++ {
				if pyEqual(la[i], lb[i]) {
					continue
				}
				return pyLess(la[i], lb[i], sym)
			}
			return len(la) < len(lb), nil
		}
	}
	left, right := pyType(a), pyType(b)
	if sym == ">" {
		left, right = right, left
	}
	return false, fmt.Errorf("TypeError: '%s' not supported between instances of '%s' and '%s'", sym, left, right)
}
