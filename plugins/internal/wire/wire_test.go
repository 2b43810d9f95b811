package wire

import (
	"strings"
	"testing"
)

type named map[string]any

// TestMapToStruct: nil stays nil, a named map[string]any (what
// plugins.DriverInfo is) nested in a value is sent as a JSON object, and a
// value that is not JSON-like is refused naming its key, never its value.
func TestMapToStruct(t *testing.T) {
	if s, err := MapToStruct(nil); s != nil || err != nil {
		t.Fatalf("nil: %v, %v", s, err)
	}
	s, err := MapToStruct(map[string]any{"outer": named{"password": "hunter2", "port": 623.0}})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.AsMap()["outer"].(map[string]any)["port"]; got != 623.0 {
		t.Errorf("nested named map: port %v, want 623", got)
	}
	_, err = MapToStruct(map[string]any{"secret_key": struct{ V string }{"hunter2"}})
	if err == nil || !strings.Contains(err.Error(), `"secret_key"`) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v: want the key named and the value left out", err)
	}
}
