package config

import "testing"

// TestConsolePortRange: [console] port_range takes low:high and refuses
// anything else with how to write it; socat_address must be an IP.
func TestConsolePortRange(t *testing.T) {
	if lo, hi, err := ParsePortRange(" 10000:10010 "); err != nil || lo != 10000 || hi != 10010 {
		t.Fatalf("%d %d %v", lo, hi, err)
	}
	for _, bad := range []string{"", "10000", "0:10", "10:5", "1:70000", "a:b", "10000-20000"} {
		if _, _, err := ParsePortRange(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	o, _ := Lookup("console", "port_range")
	if p := o.problem("20000:10000"); p == "" {
		t.Error("a reversed range passed the option check")
	}
	a, _ := Lookup("console", "socat_address")
	if p := a.problem("conductor.example"); p == "" {
		t.Error("a host name passed as socat_address")
	}
	if p := a.problem("::1"); p != "" {
		t.Errorf("::1 refused: %s", p)
	}
}
