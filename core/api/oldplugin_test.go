package api_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/test/testenv"
)

// TestPluginFromRelease01: a driver plugin built with release 0.1's SDK,
// loaded by this conductor, negotiates protocol 1 (power interface 1) and
// keeps powering its nodes; soft power or a timeout on its node is refused
// through the API with Ironic's 400, naming the plugin and what it
// negotiated, and the node is left as it was. The same conductor drives
// this tree's plugin at protocol 2, soft power included.
func TestPluginFromRelease01(t *testing.T) {
	old := filepath.Join(testenv.BuildRelease(t, "0.1", "./cmd/rivet-driver-fake"), "rivet-driver-fake")
	current := buildFakePlugin(t)
	for name, tc := range map[string]struct {
		bin      string
		protocol int
	}{
		"0.1 plugin":    {old, 1},
		"HEAD's plugin": {current, plugins.ProtocolVersion},
	} {
		t.Run(name, func(t *testing.T) {
			m, reg := startFakePlugin(t, tc.bin)
			if reg.Protocol != tc.protocol || reg.Interfaces[plugins.InterfacePower] != tc.protocol {
				t.Fatalf("negotiated protocol %d, power %d; want %d for both", reg.Protocol, reg.Interfaces[plugins.InterfacePower], tc.protocol)
			}
			srv := httptest.NewServer(newStackWith(t, release.NewPinner(release.Default(), release.Pin{}),
				conductor.PluginDrivers{Manager: m, Enabled: []string{fake.HardwareType}}))
			defer srv.Close()
			c := &versionedClient{t: t, url: srv.URL, ver: "1.27"}
			c.call("POST", "/v1/nodes", `{"name":"n1","driver":"fake-hardware"}`, http.StatusCreated)
			for _, target := range []string{"power on", "power off", "rebooting"} {
				c.call("PUT", "/v1/nodes/n1/states/power", `{"target":"`+target+`"}`, http.StatusAccepted)
				c.waitPower(plugins.PowerState(target).Final())
			}
			if tc.protocol >= 2 {
				c.call("PUT", "/v1/nodes/n1/states/power", `{"target":"soft power off","timeout":30}`, http.StatusAccepted)
				c.waitPower(plugins.PowerOff)
				c.call("PUT", "/v1/nodes/n1/states/power", `{"target":"soft rebooting"}`, http.StatusAccepted)
				c.waitPower(plugins.PowerOn)
				return
			}
			for body, want := range map[string]string{
				`{"target":"soft power off"}`: `The driver fake-hardware does not support the power state, soft power off: its driver plugin "fake" ` +
					`(version 1.0.0) negotiated plugin protocol 1 and power interface version 1; soft power needs plugin protocol 2 with power interface version 2`,
				`{"target":"soft rebooting","timeout":60}`: `does not support the power state, soft rebooting: its driver plugin "fake"`,
				`{"target":"power off","timeout":60}`: `The driver fake-hardware does not support a timeout for the power state, power off: its driver plugin "fake" ` +
					`(version 1.0.0) negotiated plugin protocol 1 and power interface version 1; a power timeout needs plugin protocol 2`,
			} {
				fault := c.fault("PUT", "/v1/nodes/n1/states/power", body, http.StatusBadRequest)
				if !strings.Contains(fault, want) {
					t.Errorf("%s: fault %q, want it to contain %q", body, fault, want)
				}
			}
			n := c.call("GET", "/v1/nodes/n1", "", http.StatusOK)
			if n["power_state"] != "power on" || n["target_power_state"] != nil || n["last_error"] != nil || n["reservation"] != nil {
				t.Errorf("refused soft power changed the node: %v", n)
			}
		})
	}
}

// waitPower polls n1 until its power action is over and it reads want.
func (c *versionedClient) waitPower(want plugins.PowerState) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := c.call("GET", "/v1/nodes/n1", "", http.StatusOK)
		if n["power_state"] == string(want) && n["target_power_state"] == nil && n["reservation"] == nil {
			if n["last_error"] != nil {
				c.t.Fatalf("power %s with last_error %v", want, n["last_error"])
			}
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("node never reached %s: %v (last_error %v)", want, n["power_state"], n["last_error"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
