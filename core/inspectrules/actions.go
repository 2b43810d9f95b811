package inspectrules

import (
	"fmt"
	"slices"
	"strings"
)

// NormalizePath is Ironic's normalize_path: "/a/b" or "a.b" → [a b].
func NormalizePath(path string) []string {
	if strings.Contains(path, "/") {
		return strings.Split(strings.Trim(path, "/"), "/")
	}
	return strings.Split(path, ".")
}

func (rc *run) act(op string, a map[string]any) error {
	env := rc.env
	switch op {
	case "fail":
		return &ExecError{Msg: "Failed to inspect hardware. Reason: " + PyStr(a["msg"])}
	case "log":
		level := "info"
		if l, ok := a["level"].(string); ok {
			level = strings.ToLower(l)
		}
		if !slices.Contains([]string{"debug", "info", "warning", "error", "critical"}, level) {
			return &ExecError{Msg: fmt.Sprintf("Inspection rule execution failed. Reason: Invalid log level: %s. Choose from debug, info, warning, error, critical", level)}
		}
		env.Log(level, PyStr(a["msg"]))
		return nil
	case "set-attribute", "extend-attribute", "del-attribute":
		path := PyStr(a["path"])
		if err := changeAttr(env.Node(), op, path, a); err != nil {
			switch op {
			case "set-attribute":
				return actionFailure("Failed to set attribute %s with value %s: %v", path, PyStr(a["value"]), err)
			case "extend-attribute":
				return actionFailure("Failed to extend attribute %s: %v", path, err)
			}
			return actionFailure("Failed to delete attribute at %s: %v", path, err)
		}
		return nil
	case "set-port-attribute", "extend-port-attribute", "del-port-attribute":
		id := PyStr(a["port_id"])
		port, err := env.Port(id)
		if err != nil {
			return err
		}
		path := PyStr(a["path"])
		if err := changeAttr(port, strings.Replace(op, "-port", "", 1), path, a); err != nil {
			verb := map[string]string{"set-port-attribute": "set", "extend-port-attribute": "extend", "del-port-attribute": "delete"}[op]
			return actionFailure("Failed to %s attribute %s for port %s: %v", verb, path, id, err)
		}
		return nil
	case "set-capability", "unset-capability":
		name := PyStr(a["name"])
		props, _ := env.Node().Fields()["properties"].(map[string]any)
		props = cloneMap(props)
		caps, _ := props["capabilities"].(string)
		if op == "set-capability" {
			v, ok := a["value"].(string)
			if !ok {
				return actionFailure("Failed to set capability %s: sequence item 1: expected str instance, %s found", name, pyType(a["value"]))
			}
			if caps != "" {
				caps += ","
			}
			props["capabilities"] = caps + name + ":" + v
		} else {
			var kept []string
			for _, c := range strings.Split(caps, ",") {
				if !strings.HasPrefix(c, name+":") {
					kept = append(kept, c)
				}
			}
			props["capabilities"] = strings.Join(kept, ",")
		}
		if err := env.Node().Set("properties", props); err != nil {
			return actionFailure("Failed to %s capability %s: %v", strings.TrimSuffix(op, "-capability"), name, err)
		}
		return nil
	case "add-trait":
		name := PyStr(a["name"])
		if err := env.AddTrait(name); err != nil {
			return actionFailure("Failed to add new trait %s: %v", name, err)
		}
		return nil
	case "remove-trait":
		name := PyStr(a["name"])
		found, err := env.RemoveTrait(name)
		if err != nil {
			return actionFailure("Failed to remove trait %s: %v", name, err)
		}
		if !found {
			env.Log("warning", fmt.Sprintf("Failed to remove trait %s: Node does not have trait %s", name, name))
		}
		return nil
	case "set-plugin-data":
		path := PyStr(a["path"])
		if err := setNested(rc.realPD, strings.Split(path, "."), a["value"]); err != nil {
			return actionFailure("Failed to set plugin data at %s: %v", path, err)
		}
		return nil
	case "extend-plugin-data":
		path := PyStr(a["path"])
		keys := strings.Split(path, ".")
		var cur []any
		if v, ok := getNested(rc.realPD, keys); ok && v != nil {
			l, isList := v.([]any)
			if !isList {
				return actionFailure("Failed to extend plugin data at %s: '%s' object has no attribute 'append'", path, pyType(v))
			}
			cur = l
		}
		unique, _ := a["unique"].(bool)
		if !unique || !slices.ContainsFunc(cur, func(x any) bool { return pyEqual(x, a["value"]) }) {
			cur = append(slices.Clone(cur), a["value"])
		}
		if err := setNested(rc.realPD, keys, cur); err != nil {
			return actionFailure("Failed to extend plugin data at %s: %v", path, err)
		}
		return nil
	case "unset-plugin-data":
		path := PyStr(a["path"])
		if !unsetNested(rc.realPD, strings.Split(path, ".")) {
			rc.env.Log("warning", "Path "+path+" not found")
		}
		return nil
	}
	return fmt.Errorf("Unsupported action '%s'.", op)
}

// changeAttr sets, extends or deletes path (a field, or a key inside a
// dict field) of t. The field's dict is copied, never changed in place.
func changeAttr(t Target, op, path string, a map[string]any) error {
	parts := NormalizePath(path)
	fields := t.Fields()
	if len(parts) == 1 {
		switch op {
		case "set-attribute":
			return t.Set(parts[0], a["value"])
		case "del-attribute":
			if _, ok := fields[parts[0]]; !ok {
				return fmt.Errorf("'%s' object has no attribute '%s'", "Node", parts[0])
			}
			return t.Reset(parts[0])
		}
		cur, ok := fields[parts[0]]
		var list []any
		switch l := cur.(type) {
		case nil:
		case []any:
			list = l
		case []string:
			for _, s := range l {
				list = append(list, s)
			}
		default:
			_ = ok
			return &ExecError{Msg: fmt.Sprintf("Inspection rule action execution failed. Reason: Cannot extend non-list attribute %s with value %s", path, PyStr(a["value"]))}
		}
		if unique, _ := a["unique"].(bool); !unique || !slices.ContainsFunc(list, func(x any) bool { return pyEqual(x, a["value"]) }) {
			list = append(slices.Clone(list), a["value"])
		}
		return t.Set(parts[0], list)
	}
	base, ok := fields[parts[0]].(map[string]any)
	if !ok {
		if _, exists := fields[parts[0]]; !exists {
			return fmt.Errorf("'Node' object has no attribute '%s'", parts[0])
		}
		return fmt.Errorf("'%s' object does not support item assignment", pyType(fields[parts[0]]))
	}
	root := deepCopy(base).(map[string]any)
	cur := root
	for _, p := range parts[1 : len(parts)-1] {
		next, exists := cur[p]
		if !exists {
			if op == "del-attribute" {
				return fmt.Errorf("%s", pyRepr(p))
			}
			next = map[string]any{}
			cur[p] = next
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("'%s' object has no attribute 'setdefault'", pyType(next))
		}
		cur = m
	}
	last := parts[len(parts)-1]
	switch op {
	case "set-attribute":
		cur[last] = a["value"]
	case "del-attribute":
		if _, exists := cur[last]; !exists {
			return fmt.Errorf("%s", pyRepr(last))
		}
		delete(cur, last)
	default:
		var list []any
		if v, exists := cur[last]; exists {
			l, isList := v.([]any)
			if !isList {
				return &ExecError{Msg: fmt.Sprintf("Inspection rule action execution failed. Reason: Cannot extend non-list attribute %s with value %s", path, PyStr(a["value"]))}
			}
			list = l
		}
		if unique, _ := a["unique"].(bool); !unique || !slices.ContainsFunc(list, func(x any) bool { return pyEqual(x, a["value"]) }) {
			list = append(list, a["value"])
		}
		cur[last] = list
	}
	return t.Set(parts[0], root)
}

func setNested(d map[string]any, keys []string, v any) error {
	cur := d
	for _, k := range keys[:len(keys)-1] {
		next, ok := cur[k]
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("'%s' object does not support item assignment", pyType(next))
		}
		cur = m
	}
	cur[keys[len(keys)-1]] = v
	return nil
}

func getNested(d map[string]any, keys []string) (any, bool) {
	var cur any = d
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// unsetNested is Ironic's _unset_nested_dict: the key goes; a dict left
// empty by it goes from its parent too.
func unsetNested(d map[string]any, keys []string) bool {
	cur := d
	parents := []map[string]any{d}
	for _, k := range keys[:len(keys)-1] {
		m, ok := cur[k].(map[string]any)
		if !ok {
			return false
		}
		cur = m
		parents = append(parents, m)
	}
	last := keys[len(keys)-1]
	if _, ok := cur[last]; !ok {
		return false
	}
	if len(cur) == 1 && len(keys) > 1 {
		delete(parents[len(parents)-2], keys[len(keys)-2])
	} else {
		delete(cur, last)
	}
	return true
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
