package api_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// fakeStack serves the API over a real conductor with fake-hardware,
// pinned as pin, microversions up to maxAPI.
func fakeStack(t *testing.T, pin release.Pin, maxAPI string) *allocStack {
	srv := httptest.NewServer(newStackWith(t, release.NewPinner(release.Default(), pin),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)}, api.WithTestMaxAPI(maxAPI)))
	t.Cleanup(srv.Close)
	return &allocStack{t: t, url: srv.URL}
}

// activeNode creates a node from body (API 1.31) and deploys it: its UUID.
func (s *allocStack) activeNode(body string) string {
	s.t.Helper()
	id := s.call("1.31", "POST", "/v1/nodes", body, 201)["uuid"].(string)
	for _, step := range [][2]string{{"manage", "manageable"}, {"provide", "available"}, {"active", "active"}} {
		s.call("1.31", "PUT", "/v1/nodes/"+id+"/states/provision", fmt.Sprintf(`{"target":%q}`, step[0]), 202)
		s.waitNode(id, step[1])
	}
	return id
}

// TestServiceThroughRealConductor: over a real conductor and the fake
// driver's raid interface, an active node is serviced (1.87) with
// raid.apply_configuration and returns to active with raid_config and
// target_raid_config set; a failing step leaves it in service failed,
// from which abort returns it to active.
func TestServiceThroughRealConductor(t *testing.T) {
	s := fakeStack(t, release.Pin{}, "1.108")
	id := s.activeNode(`{"name":"n1","driver":"fake-hardware","raid_interface":"fake"}`)
	prov := "/v1/nodes/" + id + "/states/provision"
	body := `{"target":"service","disable_ramdisk":true,"service_steps":[{"interface":"raid","step":"apply_configuration",
		"args":{"raid_config":{"logical_disks":[{"size_gb":200,"raid_level":"1","is_root_volume":true}]}}}]}`
	s.call("1.86", "PUT", prov, body, 406)
	s.call("1.108", "PUT", prov, body, 202)
	s.waitNode(id, "active")
	n := s.call("1.87", "GET", "/v1/nodes/"+id, "", 200)
	disks, _ := n["raid_config"].(map[string]any)["logical_disks"].([]any)
	if len(disks) != 1 || n["service_step"] == nil || len(n["service_step"].(map[string]any)) != 0 || n["last_error"] != nil {
		t.Fatalf("after service: raid_config %v, service_step %v, last_error %v", n["raid_config"], n["service_step"], n["last_error"])
	}
	if caps := n["properties"].(map[string]any)["capabilities"]; caps != "raid_level:1" {
		t.Errorf("capabilities %v", caps)
	}

	// A step that fails (the fake's disks hold 4000 GiB) and abort.
	s.call("1.87", "PUT", prov, `{"target":"service","service_steps":[{"interface":"raid","step":"apply_configuration",
		"args":{"raid_config":{"logical_disks":[{"size_gb":9000,"raid_level":"0"}]}}}]}`, 202)
	n = s.waitFor("/v1/nodes/"+id, func(n map[string]any) bool {
		return n["provision_state"] == "service failed" && n["reservation"] == nil
	})
	if msg, _ := n["last_error"].(string); !strings.Contains(msg, "failed service step raid.apply_configuration") || n["maintenance"] != true {
		t.Fatalf("service failed: last_error %v, maintenance %v", n["last_error"], n["maintenance"])
	}
	s.call("1.87", "DELETE", "/v1/nodes/"+id+"/maintenance", "", 202)
	s.call("1.87", "PUT", prov, `{"target":"abort"}`, 202)
	s.waitNode(id, "active")
}

// TestRAIDWithIronicClient: Debian's `baremetal` CLI sets a node's raid
// interface and target RAID configuration, lists the driver's logical
// disk properties and cleans the node with raid.create_configuration over
// a real conductor; raid_config shows the volume. (This client predates
// `baremetal node service`, 1.87.)
func TestRAIDWithIronicClient(t *testing.T) {
	c := startCLI(t, newStack(t))
	cli, obj := c.cli, c.obj
	cli("node", "create", "--driver", "fake-hardware", "--name", "r1", "--raid-interface", "fake")
	cli("node", "set", "r1", "--target-raid-config", `{"logical_disks": [{"size_gb": "MAX", "raid_level": "5", "is_root_volume": true}]}`)
	if out := cli("driver", "raid", "property", "list", "fake-hardware", "-f", "json"); !strings.Contains(out, "size_gb") {
		t.Errorf("driver raid property list: %s", out)
	}
	if out, err := c.run("node", "set", "r1", "--target-raid-config", `{"logical_disks": [{"size_gb": 10, "raid_level": "7"}]}`); err == nil ||
		!strings.Contains(out, "RAID config validation error") {
		t.Errorf("a bad RAID level was taken: %v\n%s", err, out)
	}
	cli("node", "manage", "r1", "--wait", "30")
	cli("node", "clean", "r1", "--clean-steps", `[{"interface": "raid", "step": "create_configuration"}]`, "--wait", "30")
	n := obj(cli("node", "show", "r1", "-f", "json"))
	disks, _ := n["raid_config"].(map[string]any)["logical_disks"].([]any)
	if n["provision_state"] != "manageable" || len(disks) != 1 {
		t.Fatalf("after cleaning: %v, raid_config %v, last_error %v", n["provision_state"], n["raid_config"], n["last_error"])
	}
}

// TestServiceHoldThroughRealConductor: the REST flow of a hold step over a
// real conductor: service with power_off then hold (1.87) leaves the node
// in "service hold" with the step shown and PATCH allowed; unhold (1.85)
// runs the steps after it (power_on) and the node is active again. Pinned
// to 0.3, whose conductors (RPC 1.5) do not know reserved steps, both the
// hold step and unhold are 406 and the node stays where it was.
func TestServiceHoldThroughRealConductor(t *testing.T) {
	s := fakeStack(t, release.Pin{}, "1.108")
	id := s.activeNode(`{"name":"n1","driver":"fake-hardware"}`)
	prov := "/v1/nodes/" + id + "/states/provision"
	s.call("1.87", "PUT", prov, `{"target":"service","service_steps":[{"interface":"power","step":"power_off"},
		{"interface":"deploy","step":"hold"},{"interface":"power","step":"power_on"}]}`, 202)
	n := s.waitFor("/v1/nodes/"+id, func(n map[string]any) bool {
		return n["provision_state"] == "service hold" && n["reservation"] == nil
	})
	n = s.call("1.87", "GET", "/v1/nodes/"+id, "", 200) // service_step is 1.87's
	if st, _ := n["service_step"].(map[string]any); st["step"] != "hold" || n["power_state"] != "power off" || n["target_provision_state"] != "active" {
		t.Fatalf("held: service_step %v, power_state %v, target %v", n["service_step"], n["power_state"], n["target_provision_state"])
	}
	s.call("1.87", "PATCH", "/v1/nodes/"+id, `[{"op":"add","path":"/extra/held","value":"checked"}]`, 200)
	s.call("1.84", "PUT", prov, `{"target":"unhold"}`, 406)
	s.call("1.85", "PUT", prov, `{"target":"unhold"}`, 202)
	n = s.waitNode(id, "active")
	if n["power_state"] != "power on" || n["last_error"] != nil || n["extra"].(map[string]any)["held"] != "checked" {
		t.Fatalf("after unhold: power_state %v, last_error %v, extra %v", n["power_state"], n["last_error"], n["extra"])
	}

	old, ok := release.Default().Lookup("0.3")
	if !ok {
		t.Fatal("no release 0.3")
	}
	p := fakeStack(t, release.Pin{Mode: release.PinRelease, Release: old}, "1.110")
	id = p.activeNode(`{"name":"n1","driver":"fake-hardware"}`)
	prov = "/v1/nodes/" + id + "/states/provision"
	p.call("1.87", "PUT", prov, `{"target":"service","service_steps":[{"interface":"deploy","step":"hold"}]}`, 406)
	if n := p.call("1.87", "GET", "/v1/nodes/"+id, "", 200); n["provision_state"] != "active" {
		t.Fatalf("a refused hold moved the node to %v", n["provision_state"])
	}
}
