package inspectrules

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// BenchmarkApply50Rules: 50 rules (conditions with interpolation, a loop,
// actions on the node and the plugin data) on the inventory IPA 9.14.1
// posted, per inspection.
func BenchmarkApply50Rules(b *testing.B) {
	data, err := os.ReadFile("../api/testdata/ipa-9.14.1-inspection.json")
	if err != nil {
		b.Fatal(err)
	}
	var posted map[string]any
	if err := json.Unmarshal(data, &posted); err != nil {
		b.Fatal(err)
	}
	inv := posted["inventory"].(map[string]any)
	var rules []Rule
	for i := range 50 {
		var r map[string]any
		_ = json.Unmarshal([]byte(fmt.Sprintf(`{"priority": %d, "conditions": [
			{"op": "eq", "args": {"values": ["{inventory[cpu][architecture]}", "x86_64"]}},
			{"op": "contains", "args": {"value": "{item[mac_address]}", "regex": "^02:"}, "loop": [{"mac_address": "{inventory[interfaces][0][mac_address]}"}, {"mac_address": "52:54:00:00:00:01"}]}],
			"actions": [{"op": "set-attribute", "args": {"path": "/extra/r%d", "value": "{inventory[cpu][count]}"}},
				{"op": "set-plugin-data", "args": {"path": "rules.r%d", "value": "{inventory[memory][physical_mb]}"}}]}`, i, i, i)), &r)
		rules = append(rules, Rule{UUID: fmt.Sprint(i), Priority: int64(i), Conditions: maps(r["conditions"]), Actions: maps(r["actions"])})
	}
	b.ResetTimer()
	for range b.N {
		env := newEnv()
		if err := Apply(env, rules, inv, map[string]any{}, MaskAlways, "n-1"); err != nil {
			b.Fatal(err)
		}
	}
}
