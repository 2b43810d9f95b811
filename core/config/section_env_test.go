package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// The conductor's [redfish] values survive the trip through the
// environment to a plugin, which needs nothing else (no [database]).
func TestSectionEnvRoundTrip(t *testing.T) {
	c := Default()
	c.Redfish.ConnectionTimeout = 1500 * time.Millisecond
	c.Redfish.UseSessions = false
	env := SectionEnv(c, "redfish")
	if !slices.Contains(env, "RIVET_REDFISH_CONNECTION_TIMEOUT=1.5") {
		t.Fatalf("env %q lacks the connection timeout", env)
	}
	got, err := LoadSection("redfish", append(env, "RIVET_IPMI_RETRIES=7", "RIVET_DATABASE_CONNECTION="))
	if err != nil {
		t.Fatal(err)
	}
	if got.Redfish != c.Redfish {
		t.Errorf("redfish after the round trip %+v, want %+v", got.Redfish, c.Redfish)
	}
	if got.IPMI.Retries == 7 {
		t.Error("LoadSection took an option of another section")
	}
	if _, err := LoadSection("redfish", []string{"RIVET_REDFISH_SESSION_BUDGET_PER_BMC=0"}); err == nil ||
		!strings.Contains(err.Error(), "session_budget_per_bmc") {
		t.Errorf("out-of-bounds value: %v, want a problem naming the option", err)
	}
}
