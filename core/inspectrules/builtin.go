package inspectrules

import (
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// LoadBuiltIn reads built-in rules from a YAML (or JSON) file, as
// Ironic's get_built_in_rules: a list of rules, each validated as built in
// (any priority); one without a uuid gets a synthetic one
// (00000000-0000-0000-0000-<index in hex>); phase defaults to main,
// priority to 0. An empty path is no rules.
func LoadBuiltIn(path string) ([]Rule, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("built-in inspection rules: %w", err)
	}
	return ParseBuiltIn(data, path)
}

// ParseBuiltIn parses the content of a built-in rules file (name is used
// in errors).
func ParseBuiltIn(data []byte, name string) ([]Rule, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("Error parsing YAML in built-in rules file %s: %v", name, err)
	}
	var list []any
	if err := json.Unmarshal(js, &list); err != nil {
		return nil, fmt.Errorf("Built-in rules file (%s) should contain a list of rules", name)
	}
	var out []Rule
	synthetic := 0
	for i, it := range list {
		doc, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("Error parsing built-in rule %d of %s: a rule must be a mapping", i, name)
		}
		if _, ok := doc["conditions"]; !ok {
			doc["conditions"] = []any{}
		}
		if err := Validate(doc, true); err != nil {
			return nil, fmt.Errorf("Error parsing built-in rule %d of %s: %v", i, name, err)
		}
		r := Rule{Conditions: maps(doc["conditions"]), Actions: maps(doc["actions"])}
		r.Priority, _ = Int(doc["priority"])
		r.Sensitive, _ = doc["sensitive"].(bool)
		if u, ok := doc["uuid"].(string); ok && u != "" {
			r.UUID = u
		} else {
			r.UUID = fmt.Sprintf("00000000-0000-0000-0000-%012x", synthetic)
			synthetic++
		}
		out = append(out, r)
	}
	return out, nil
}

func maps(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, it := range l {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
