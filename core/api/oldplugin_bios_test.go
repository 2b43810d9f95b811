package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/test/testenv"
)

// TestPluginWithoutBIOS: a driver plugin built with release 0.2's SDK
// (protocol 2, without the bios and firmware interfaces) is driven by this
// conductor without them: its nodes get no-bios and no-firmware, naming
// its bios implementation is Ironic's 400, a bios or firmware clean step
// is refused with 400 "Driver fake-hardware does not support bios" before
// cleaning starts, nothing crashes and the node stays usable. HEAD's
// plugin negotiates bios and firmware version 1 and runs the same step
// across the process boundary.
func TestPluginWithoutBIOS(t *testing.T) {
	old := filepath.Join(testenv.BuildRelease(t, "0.2", "./cmd/rivet-driver-fake"), "rivet-driver-fake")
	current := buildFakePlugin(t)
	for name, tc := range map[string]struct {
		bin  string
		bios bool
	}{
		"0.2 plugin":    {old, false},
		"HEAD's plugin": {current, true},
	} {
		t.Run(name, func(t *testing.T) {
			m, reg := startFakePlugin(t, tc.bin)
			_, hasBIOS := reg.Interfaces[plugins.InterfaceBIOS]
			_, hasFW := reg.Interfaces[plugins.InterfaceFirmware]
			if hasBIOS != tc.bios || hasFW != tc.bios || reg.Protocol != 2 {
				t.Fatalf("negotiated %v at protocol %d; bios and firmware expected: %v", reg.Interfaces, reg.Protocol, tc.bios)
			}
			srv := httptest.NewServer(newStackWith(t, release.NewPinner(release.Default(), release.Pin{}),
				conductor.PluginDrivers{Manager: m, Enabled: []string{fake.HardwareType}}, api.WithTestMaxAPI("1.86")))
			defer srv.Close()
			c := &versionedClient{t: t, url: srv.URL, ver: "1.86"}
			n := c.call("POST", "/v1/nodes", `{"name":"n1","driver":"fake-hardware"}`, http.StatusCreated)
			wantBIOS, wantFW := "no-bios", "no-firmware"
			if tc.bios {
				wantBIOS, wantFW = "fake", "fake"
			}
			if n["bios_interface"] != wantBIOS || n["firmware_interface"] != wantFW {
				t.Fatalf("interfaces bios %v, firmware %v; want %s, %s", n["bios_interface"], n["firmware_interface"], wantBIOS, wantFW)
			}
			c.call("PUT", "/v1/nodes/n1/states/provision", `{"target":"manage"}`, http.StatusAccepted)
			c.waitState("manageable")
			step := `{"target":"clean","clean_steps":[{"interface":"bios","step":"apply_configuration","args":{"settings":[{"name":"ProcVirtualization","value":"Disabled"}]}}]}`
			fwStep := `{"target":"clean","clean_steps":[{"interface":"firmware","step":"update","args":{"settings":[{"component":"bmc","url":"http://images.example/bmc-9.1.bin"}]}}]}`
			if !tc.bios {
				fault := c.fault("PATCH", "/v1/nodes/n1", `[{"op":"replace","path":"/bios_interface","value":"fake"}]`, http.StatusBadRequest)
				if !strings.Contains(fault, "fake") || !strings.Contains(fault, "bios") {
					t.Errorf("naming bios fake on a plugin without bios: %q", fault)
				}
				for body, iface := range map[string]string{step: "bios", fwStep: "firmware"} {
					if got := c.fault("PUT", "/v1/nodes/n1/states/provision", body, http.StatusBadRequest); got != "Driver fake-hardware does not support "+iface+" (disabled or not implemented)." {
						t.Errorf("%s step on a plugin without it: %q", iface, got)
					}
				}
				if got := c.call("GET", "/v1/nodes/n1/bios", "", http.StatusOK)["bios"].([]any); len(got) != 0 {
					t.Errorf("settings cached without a bios interface: %v", got)
				}
				n := c.call("GET", "/v1/nodes/n1", "", http.StatusOK)
				if n["provision_state"] != "manageable" || n["last_error"] != nil || n["reservation"] != nil {
					t.Errorf("refused steps changed the node: %v", n)
				}
				// The plugin is alive and still drives the node.
				c.call("PUT", "/v1/nodes/n1/states/power", `{"target":"power on"}`, http.StatusAccepted)
				return
			}
			c.call("PUT", "/v1/nodes/n1/states/provision", step, http.StatusAccepted)
			c.waitState("manageable")
			c.call("PUT", "/v1/nodes/n1/states/provision", fwStep, http.StatusAccepted)
			c.waitState("manageable")
			one := c.call("GET", "/v1/nodes/n1/bios/ProcVirtualization", "", http.StatusOK)["ProcVirtualization"].(map[string]any)
			if one["value"] != "Disabled" || one["attribute_type"] != "Enumeration" {
				t.Errorf("after apply_configuration through the plugin: %v", one)
			}
			fw := c.call("GET", "/v1/nodes/n1/firmware", "", http.StatusOK)["firmware"].([]any)
			if len(fw) != 2 || fw[1].(map[string]any)["current_version"] != "9.1" || fw[1].(map[string]any)["last_version_flashed"] != "9.1" {
				t.Errorf("firmware after the update through the plugin: %v", fw)
			}
		})
	}
}

// versionedClient talks to an API test server at ver.
type versionedClient struct {
	t   *testing.T
	url string
	ver string
}

func (c *versionedClient) do(method, path, body string, want int) []byte {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.url+path, strings.NewReader(body))
	req.Header.Set(api.HeaderVersion, c.ver)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&raw)
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s %s: %d, want %d: %s", method, path, body, resp.StatusCode, want, raw)
	}
	return raw
}

func (c *versionedClient) call(method, path, body string, want int) map[string]any {
	c.t.Helper()
	var out map[string]any
	_ = json.Unmarshal(c.do(method, path, body, want), &out)
	return out
}

func (c *versionedClient) fault(method, path, body string, want int) string {
	c.t.Helper()
	var outer struct {
		ErrorMessage string `json:"error_message"`
	}
	var inner struct {
		Faultstring string `json:"faultstring"`
	}
	if json.Unmarshal(c.do(method, path, body, want), &outer) != nil || json.Unmarshal([]byte(outer.ErrorMessage), &inner) != nil {
		c.t.Fatalf("%s %s: not Ironic's error body", method, path)
	}
	return inner.Faultstring
}

// waitState waits (a generous bound, the machine may be loaded) for the
// node n1 to rest in state.
func (c *versionedClient) waitState(state string) {
	c.t.Helper()
	var n map[string]any
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		n = c.call("GET", "/v1/nodes/n1", "", http.StatusOK)
		if n["provision_state"] == state && n["target_provision_state"] == nil {
			return
		}
	}
	c.t.Fatalf("node n1: %v (last_error %v), want %s", n["provision_state"], n["last_error"], state)
}
