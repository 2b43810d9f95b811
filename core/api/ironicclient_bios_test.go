package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// TestIronicClientBIOS drives Debian's `baremetal` CLI (5.0.1, which
// knows API 1.78) against the API over a real conductor with the fake
// bios interface: after `node manage` the BIOS settings are cached;
// `node bios setting list` (1.40 shape), `--long` (1.74 registry fields),
// `--fields` and `node bios setting show` parse what the API answers, and
// a manual clean with bios.apply_configuration changes what they show.
// This CLI has no `node firmware list` (it stops at 1.78; the firmware
// resource is 1.86): TestV1_86Firmware covers that resource.
func TestIronicClientBIOS(t *testing.T) {
	h := newStackWith(t, release.NewPinner(release.Default(), release.Pin{}),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)}, api.WithTestMaxAPI("1.78"))
	c := startCLI(t, h)
	cli := c.cli
	cli("node", "create", "--driver", "fake-hardware", "--name", "b1")
	cli("node", "manage", "b1", "--wait", "60")
	var rows []map[string]any
	list := func(args ...string) []map[string]any {
		t.Helper()
		out := cli(append([]string{"node", "bios", "setting", "list", "b1", "-f", "json"}, args...)...)
		rows = nil
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		return rows
	}
	plain := list()
	if len(plain) != 4 {
		t.Fatalf("bios setting list: %v", plain)
	}
	for _, r := range plain {
		if r["BIOS setting name"] == "ProcVirtualization" && r["BIOS setting value"] != "Enabled" {
			t.Errorf("ProcVirtualization row %v", r)
		}
	}
	long := list("--long")
	found := false
	for _, r := range long {
		if r["Name"] == "ProcCoreDisable" || r["BIOS setting name"] == "ProcCoreDisable" {
			found = true
			if r["Attribute Type"] != "Integer" || r["Upper Bound"] != float64(32) {
				t.Errorf("--long row %v", r)
			}
		}
	}
	if !found {
		t.Errorf("--long lacks ProcCoreDisable: %v", long)
	}
	picked := list("--fields", "name", "attribute_type")
	if len(picked) != 4 || len(picked[0]) != 2 {
		t.Errorf("--fields name attribute_type: %v", picked)
	}
	show := c.obj(cli("node", "bios", "setting", "show", "b1", "BootMode", "-f", "json"))
	if show["value"] != "Uefi" || show["attribute_type"] != "Enumeration" {
		t.Errorf("bios setting show: %v", show)
	}
	cli("node", "clean", "b1", "--wait", "60", "--clean-steps",
		`[{"interface": "bios", "step": "apply_configuration", "args": {"settings": [{"name": "ProcVirtualization", "value": "Disabled"}]}}]`)
	show = c.obj(cli("node", "bios", "setting", "show", "b1", "ProcVirtualization", "-f", "json"))
	if show["value"] != "Disabled" {
		t.Errorf("after apply_configuration: %v", show)
	}
	if out, err := c.run("node", "clean", "b1", "--clean-steps", `[{"interface": "bios", "step": "apply_configuration", "args": {}}]`); err == nil ||
		!strings.Contains(out, "settings") {
		t.Errorf("a clean without settings: %v\n%s", err, out)
	}
}
