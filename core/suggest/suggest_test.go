package suggest

import "testing"

func TestClosest(t *testing.T) {
	known := []string{"fake-hardware", "ipmi", "redfish"}
	for name, want := range map[string]string{
		"redfsh":   "redfish", // one deletion
		"Redfish":  "redfish", // case
		"rdefish":  "redfish", // adjacent swap
		"ipm":      "ipmi",
		"fake":     "", // too far from fake-hardware
		"idrac":    "",
		"":         "",
		"fakehard": "",
	} {
		if got := Closest(name, known); got != want {
			t.Errorf("Closest(%q) = %q, want %q", name, got, want)
		}
	}
	if got := Closest("port", []string{"sort", "part"}); got != "" {
		t.Errorf("a tie suggested %q", got)
	}
}
