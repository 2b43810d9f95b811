package inspectrules

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// opSpec is one condition operator or action: its arguments in order
// (required first, as Ironic's signatures list them), which of them are
// interpolated, and whether it works on the plugin data.
type opSpec struct {
	required, optional []string
	formatted          []string
	pluginData         bool
}

// Operators are Ironic's condition operators (OPERATORS), each usable
// inverted as "!op".
var operators = map[string]opSpec{
	"eq":       {required: []string{"values"}, optional: []string{"force_strings"}, formatted: []string{"values"}},
	"lt":       {required: []string{"values"}, optional: []string{"force_strings"}, formatted: []string{"values"}},
	"gt":       {required: []string{"values"}, optional: []string{"force_strings"}, formatted: []string{"values"}},
	"is-empty": {required: []string{"value"}, formatted: []string{"value"}},
	"in-net":   {required: []string{"address", "subnet"}, formatted: []string{"address", "subnet"}},
	"matches":  {required: []string{"value", "regex"}, formatted: []string{"value"}},
	"contains": {required: []string{"value", "regex"}, formatted: []string{"value"}},
	"one-of":   {required: []string{"value"}, optional: []string{"values"}, formatted: []string{"value"}},
	"is-none":  {required: []string{"value"}, formatted: []string{"value"}},
	"is-true":  {required: []string{"value"}, formatted: []string{"value"}},
	"is-false": {required: []string{"value"}, formatted: []string{"value"}},
}

// OperatorNames lists the condition operators in Ironic's order.
var OperatorNames = []string{"eq", "lt", "gt", "is-empty", "in-net", "matches", "contains", "one-of",
	"is-none", "is-true", "is-false"}

// actions are Ironic's actions (ACTIONS) but api-call, which Rivet leaves
// out: a rule would make the conductor fetch any URL an API user names.
var actions = map[string]opSpec{
	"fail":                  {required: []string{"msg"}},
	"log":                   {required: []string{"msg"}, optional: []string{"level"}, formatted: []string{"msg"}},
	"set-attribute":         {required: []string{"path", "value"}, formatted: []string{"value"}},
	"extend-attribute":      {required: []string{"path", "value"}, optional: []string{"unique"}, formatted: []string{"value"}},
	"del-attribute":         {required: []string{"path"}},
	"set-capability":        {required: []string{"name", "value"}, formatted: []string{"value"}},
	"unset-capability":      {required: []string{"name"}},
	"add-trait":             {required: []string{"name"}},
	"remove-trait":          {required: []string{"name"}},
	"set-plugin-data":       {required: []string{"path", "value"}, formatted: []string{"value"}, pluginData: true},
	"extend-plugin-data":    {required: []string{"path", "value"}, optional: []string{"unique"}, formatted: []string{"value"}, pluginData: true},
	"unset-plugin-data":     {required: []string{"path"}, pluginData: true},
	"set-port-attribute":    {required: []string{"port_id", "path", "value"}, formatted: []string{"value"}},
	"extend-port-attribute": {required: []string{"port_id", "path", "value"}, optional: []string{"unique"}, formatted: []string{"value"}},
	"del-port-attribute":    {required: []string{"port_id", "path"}},
}

// ActionNames lists the actions in Ironic's order (api-call left out).
var ActionNames = []string{"fail", "log", "set-attribute", "extend-attribute", "del-attribute",
	"set-capability", "unset-capability", "add-trait", "remove-trait", "set-plugin-data",
	"extend-plugin-data", "unset-plugin-data", "set-port-attribute", "extend-port-attribute",
	"del-port-attribute"}

// ParseInverted is Ironic's parse_inverted_operator: "!eq" is eq
// inverted; more than one "!" is an error.
func ParseInverted(op string) (string, bool, error) {
	op = strings.TrimSpace(op)
	if strings.Count(op, "!") > 1 {
		return "", false, fmt.Errorf("Multiple exclamation marks are not allowed. To apply the invert of an operation, simply add an exclamation mark (with an optional space) before the operator, e.g. eq - !eq.")
	}
	inv := strings.HasPrefix(op, "!")
	return strings.TrimSpace(strings.TrimLeft(op, "!")), inv, nil
}

// normalize turns args (a dict, or the deprecated positional list) into
// named arguments, as Ironic's _normalize_list_args. It never changes
// args.
func (sp opSpec) normalize(args any) (map[string]any, error) {
	switch a := args.(type) {
	case map[string]any:
		out := make(map[string]any, len(a))
		for k, v := range a {
			out[k] = v
		}
		return out, nil
	case []any:
		if len(a) < len(sp.required) {
			return nil, fmt.Errorf("Not enough arguments provided. Missing: %s", strings.Join(sp.required[len(a):], ", "))
		}
		out := map[string]any{}
		for i, name := range sp.required {
			out[name] = a[i]
		}
		for i, v := range a[len(sp.required):] {
			if i < len(sp.optional) {
				out[sp.optional[i]] = v
			}
		}
		return out, nil
	case nil:
		return map[string]any{}, nil
	}
	return nil, fmt.Errorf("args must be either a list or dictionary")
}

// check is Ironic's Base.validate: the named arguments must be the
// operator's, every required one given.
func (sp opSpec) check(args any) error {
	named, err := sp.normalize(args)
	if err != nil {
		return err
	}
	var missing, unexpected []string
	for _, r := range sp.required {
		if _, ok := named[r]; !ok {
			missing = append(missing, r)
		}
	}
	for k := range named {
		if !slices.Contains(sp.required, k) && !slices.Contains(sp.optional, k) {
			unexpected = append(unexpected, k)
		}
	}
	sort.Strings(unexpected)
	var msg []string
	if len(missing) > 0 {
		msg = append(msg, "missing required argument(s): "+strings.Join(missing, ", "))
	}
	if len(unexpected) > 0 {
		msg = append(msg, "unexpected argument(s): "+strings.Join(unexpected, ", "))
	}
	if len(msg) > 0 {
		return fmt.Errorf("%s", strings.Join(msg, "; "))
	}
	return nil
}
