package api_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/test/testenv"
)

// sdkPython is Debian's interpreter, where apt's python3-openstacksdk is
// (a python3 earlier on PATH, such as pyenv's, does not see it).
const sdkPython = "/usr/bin/python3"

// TestOpenstackSDK drives Debian's python3-openstacksdk (0.101) through
// testdata/openstacksdk/calls.py against the API over a real conductor at
// HEAD's maximum (the SDK negotiates each resource's version: nodes up to
// 1.76, allocations 1.58, conductors 1.49, deploy templates 1.55): node
// traits, allocations (create, wait, update, list, delete), conductors
// and deploy templates (create, update, show, list, delete). Skipped
// locally without the SDK; required under CI=true.
func TestOpenstackSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: runs the Python SDK")
	}
	if err := exec.Command(sdkPython, "-c", "import openstack").Run(); err != nil {
		testenv.Unavailable(t, "openstacksdk not importable by "+sdkPython+" (apt-get install python3-openstacksdk)")
	}
	h := newStackWith(t, release.NewPinner(release.Default(), release.Pin{}),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, sdkPython, "testdata/openstacksdk/calls.py", "http://"+ln.Addr().String())
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir(), "OS_CLOUD=")
	var stderr []byte
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	if err != nil {
		t.Fatalf("calls.py: %v\n%s\n%s", err, out, stderr)
	}
	var got struct {
		Traits            []string `json:"traits"`
		AllocationUpdated struct {
			Name  string         `json:"name"`
			Extra map[string]any `json:"extra"`
		} `json:"allocation_updated"`
		Allocations            []string       `json:"allocations"`
		AllocationsAfterDelete []string       `json:"allocations_after_delete"`
		Conductors             []string       `json:"conductors"`
		Conductor              map[string]any `json:"conductor"`
		DeployTemplate         struct {
			Name  string           `json:"name"`
			Extra map[string]any   `json:"extra"`
			Steps []map[string]any `json:"steps"`
		} `json:"deploy_template"`
		DeployTemplates            []string `json:"deploy_templates"`
		DeployTemplatesAfterDelete []string `json:"deploy_templates_after_delete"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("calls.py output: %v\n%s", err, out)
	}
	var raw map[string]any
	_ = json.Unmarshal(out, &raw)
	alloc, _ := raw["allocation"].(map[string]any)
	node, _ := raw["node"].(map[string]any)
	if node["provision_state"] != "available" {
		t.Errorf("node after manage, provide: %v", node)
	}
	if !slices.Equal(got.Traits, []string{"CUSTOM_B", "CUSTOM_C"}) {
		t.Errorf("traits = %v, want [CUSTOM_B CUSTOM_C]", got.Traits)
	}
	if alloc["state"] != "active" || alloc["node_id"] != node["uuid"] || alloc["name"] != "a1" {
		t.Errorf("allocation = %v, want active on %v", alloc, node["uuid"])
	}
	if got.AllocationUpdated.Name != "a2" || got.AllocationUpdated.Extra["k"] != "v" {
		t.Errorf("allocation after update: %+v", got.AllocationUpdated)
	}
	if len(got.Allocations) != 1 || len(got.AllocationsAfterDelete) != 0 {
		t.Errorf("allocations %v, after delete %v", got.Allocations, got.AllocationsAfterDelete)
	}
	if len(got.Conductors) != 1 || got.Conductor["hostname"] != got.Conductors[0] || got.Conductor["alive"] != true {
		t.Errorf("conductors %v, conductor %v", got.Conductors, got.Conductor)
	}
	if drivers, _ := got.Conductor["drivers"].([]any); !slices.Contains(drivers, any("fake-hardware")) {
		t.Errorf("conductor drivers %v", got.Conductor["drivers"])
	}
	wantSteps := []map[string]any{{"interface": "bios", "step": "apply_configuration", "priority": float64(150),
		"args": map[string]any{"settings": []any{map[string]any{"name": "LogicalProc", "value": "Enabled"}}}}}
	if d := cmp.Diff(wantSteps, got.DeployTemplate.Steps); d != "" || got.DeployTemplate.Name != "CUSTOM_HYPERTHREADING_ON" ||
		got.DeployTemplate.Extra["k"] != "v" {
		t.Errorf("deploy template %+v (steps -want +got):\n%s", got.DeployTemplate, d)
	}
	if !slices.Equal(got.DeployTemplates, []string{"CUSTOM_HYPERTHREADING_ON"}) || len(got.DeployTemplatesAfterDelete) != 0 {
		t.Errorf("deploy templates %v, after delete %v", got.DeployTemplates, got.DeployTemplatesAfterDelete)
	}
}
