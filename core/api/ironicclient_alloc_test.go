package api_test

import (
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// TestIronicClientAllocationsAndConductors drives Debian's
// python3-ironicclient `baremetal` CLI (it asks for 1.78) through
// allocations (create --wait, show, list, set, delete) and conductors
// against the API over a real conductor, with the API's maximum raised to
// 1.79 for the test. Skipped locally without the CLI; required under CI=true.
func TestIronicClientAllocationsAndConductors(t *testing.T) {
	cli, obj := baremetalCLI(t, newStackWith(t, release.NewPinner(release.Default(), release.Pin{}),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)}, api.WithTestMaxAPI("1.79")))
	n := obj(cli("node", "create", "--driver", "fake-hardware", "--name", "n1", "--resource-class", "gold", "-f", "json"))
	for _, verb := range []string{"manage", "provide"} {
		cli("node", verb, "n1", "--wait", "30")
	}
	cli("node", "power", "off", "n1")

	a := obj(cli("allocation", "create", "--resource-class", "gold", "--name", "a1", "--wait", "30", "-f", "json"))
	if a["state"] != "active" || a["node_uuid"] != n["uuid"] {
		t.Fatalf("allocation create --wait: %v", a)
	}
	if show := obj(cli("allocation", "show", "a1", "-f", "json")); show["uuid"] != a["uuid"] {
		t.Errorf("allocation show: %v", show)
	}
	cli("allocation", "set", "a1", "--name", "a2", "--extra", "k=v")
	if out := cli("allocation", "list", "--node", "n1", "-f", "json"); !strings.Contains(out, a["uuid"].(string)) {
		t.Errorf("allocation list: %s", out)
	}
	if show := obj(cli("node", "show", "n1", "-f", "json")); show["allocation_uuid"] != a["uuid"] {
		t.Errorf("node allocation_uuid = %v", show["allocation_uuid"])
	}
	cli("allocation", "delete", "a2")
	if out := cli("allocation", "list", "-f", "json"); strings.Contains(out, a["uuid"].(string)) {
		t.Errorf("deleted allocation listed: %s", out)
	}

	if out := cli("conductor", "list", "-f", "json"); !strings.Contains(out, `"Hostname": "cond-1"`) {
		t.Errorf("conductor list: %s", out)
	}
	if c := obj(cli("conductor", "show", "cond-1", "-f", "json")); c["alive"] != true || c["hostname"] != "cond-1" {
		t.Errorf("conductor show: %v", c)
	}
}
