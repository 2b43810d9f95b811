package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
)

// TestIronicClientNodeHistory: `baremetal node history list` and `…
// history get` (python-ironicclient, which asks for 1.78) show what a real
// conductor recorded; `node set --owner/--lessee` and `node list
// --owner/--lessee` work, at the version the client speaks against Rivet's
// advertised maximum.
func TestIronicClientNodeHistory(t *testing.T) {
	cli := startCLI(t, newStackPinned(t, release.NewPinner(release.Default(), release.Pin{}))).cli
	cli("node", "create", "--driver", "fake-hardware", "--name", "h1")
	cli("node", "manage", "h1", "--wait", "30")
	var list []map[string]any
	out := cli("node", "history", "list", "h1", "-f", "json")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	var verifying map[string]any
	for _, e := range list {
		if ev, _ := e["Description of the event"].(string); strings.Contains(ev, `to "verifying"`) {
			verifying = e
		}
	}
	if verifying == nil {
		t.Fatalf("no verifying transition listed:\n%s", out)
	}
	var one map[string]any
	out = cli("node", "history", "get", "h1", verifying["UUID"].(string), "-f", "json")
	if err := json.Unmarshal([]byte(out), &one); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if one["conductor"] != "cond-1" || one["event_type"] != "provisioning" || one["severity"] != "INFO" {
		t.Fatalf("history get: %v", one)
	}

	// Owner and lessee (1.50, 1.65): set, shown, filtered.
	cli("node", "set", "h1", "--owner", "p1", "--lessee", "p2")
	var shown map[string]any
	if err := json.Unmarshal([]byte(cli("node", "show", "h1", "-f", "json", "--fields", "owner", "lessee")), &shown); err != nil {
		t.Fatal(err)
	}
	if shown["owner"] != "p1" || shown["lessee"] != "p2" {
		t.Fatalf("node show: %v", shown)
	}
	for _, tc := range []struct{ flag, value, want string }{{"--owner", "p1", "h1"}, {"--lessee", "p2", "h1"}, {"--owner", "p2", ""}} {
		var nodes []map[string]any
		if err := json.Unmarshal([]byte(cli("node", "list", tc.flag, tc.value, "-f", "json")), &nodes); err != nil {
			t.Fatal(err)
		}
		if got := len(nodes); (tc.want == "") != (got == 0) || got > 1 || got == 1 && nodes[0]["Name"] != tc.want {
			t.Errorf("node list %s %s: %v", tc.flag, tc.value, nodes)
		}
	}
}
