package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// TestIronicClientTraitsAndTemplates drives Debian's `baremetal` CLI
// (python3-ironicclient 5.0.1, which negotiates down from 1.78) against a
// stack whose maximum is raised to 1.78 for the test: node traits (1.37)
// and deploy templates (1.55) work as the CLI uses them. Skipped locally
// without the CLI; required under CI=true.
func TestIronicClientTraitsAndTemplates(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: runs the Python CLI")
	}
	h := newStackWith(t, release.NewPinner(release.Default(), release.Pin{}),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)}, api.RaiseMaxAPI("1.78"))
	cli := ironicCLI(t, h)
	cli("node", "create", "--driver", "fake-hardware", "--name", "n1")
	cli("node", "add", "trait", "n1", "CUSTOM_RAID1", "HW_CPU_X86_AVX2")
	traits := func() []string {
		t.Helper()
		var rows []map[string]string
		if err := json.Unmarshal([]byte(cli("node", "trait", "list", "n1", "-f", "json")), &rows); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows {
			out = append(out, r["Traits"])
		}
		return out
	}
	if d := cmp.Diff([]string{"CUSTOM_RAID1", "HW_CPU_X86_AVX2"}, traits()); d != "" {
		t.Errorf("traits (-want +got):\n%s", d)
	}
	cli("node", "remove", "trait", "n1", "HW_CPU_X86_AVX2")
	if d := cmp.Diff([]string{"CUSTOM_RAID1"}, traits()); d != "" {
		t.Errorf("traits after remove (-want +got):\n%s", d)
	}
	var show map[string]any
	if err := json.Unmarshal([]byte(cli("node", "show", "n1", "--fields", "uuid", "traits", "-f", "json")), &show); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]any{"CUSTOM_RAID1"}, show["traits"]); d != "" {
		t.Errorf("node show --fields traits (-want +got):\n%s", d)
	}
	cli("node", "remove", "trait", "n1", "--all")
	if got := traits(); len(got) != 0 {
		t.Errorf("after --all: %v", got)
	}

	steps := `[{"interface": "bios", "step": "apply_configuration", "args": {"settings": [{"name": "LogicalProc", "value": "Enabled"}]}, "priority": 150}]`
	var tmpl map[string]any
	if err := json.Unmarshal([]byte(cli("deploy", "template", "create", "CUSTOM_HYPERTHREADING_ON", "--steps", steps,
		"--extra", "foo=bar", "-f", "json")), &tmpl); err != nil {
		t.Fatal(err)
	}
	if tmpl["name"] != "CUSTOM_HYPERTHREADING_ON" || tmpl["uuid"] == nil {
		t.Fatalf("created template: %v", tmpl)
	}
	cli("deploy", "template", "set", "CUSTOM_HYPERTHREADING_ON", "--name", "CUSTOM_HT_ON")
	if out := cli("deploy", "template", "list", "-f", "json"); !strings.Contains(out, "CUSTOM_HT_ON") {
		t.Errorf("template list: %s", out)
	}
	if out := cli("deploy", "template", "show", "CUSTOM_HT_ON", "-f", "json"); !strings.Contains(out, "apply_configuration") {
		t.Errorf("template show: %s", out)
	}
	cli("deploy", "template", "delete", "CUSTOM_HT_ON")
	if out := cli("deploy", "template", "list", "-f", "json"); strings.Contains(out, "CUSTOM_HT_ON") {
		t.Errorf("deleted template listed: %s", out)
	}
}
