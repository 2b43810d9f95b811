package plugins

import (
	"encoding/json"
	"testing"
)

func TestLogicalDiskNumber(t *testing.T) {
	d := LogicalDisk{"f": 10.5, "i": 3, "i64": int64(7), "j": json.Number("12"), "bad": json.Number("x"), "max": "MAX"}
	for key, want := range map[string]float64{"f": 10.5, "i": 3, "i64": 7, "j": 12} {
		if got, ok := d.Number(key); !ok || got != want {
			t.Errorf("Number(%q) = %v, %v; want %v, true", key, got, ok, want)
		}
	}
	for _, key := range []string{"bad", "max", "absent"} {
		if got, ok := d.Number(key); ok {
			t.Errorf("Number(%q) = %v, true; want not a number", key, got)
		}
	}
}
