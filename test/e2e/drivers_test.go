package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/test/testenv"
)

// waitField polls `rivet node show` until field has want.
func (d *devProcess) waitField(t *testing.T, node, field, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := strings.TrimSpace(d.rivet(t, "node", "show", node, "-f", "value", "--fields", field))
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			last := d.rivet(t, "node", "show", node, "-f", "value", "--fields", "last_error")
			t.Fatalf("node %s: %s is %q, want %q (last_error: %s)", node, field, got, want, strings.TrimSpace(last))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// redfishGet reads a resource of the embedded simulator as a BMC client would.
func (d *devProcess) redfishGet(t *testing.T, path string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, d.SimURL+path, nil)
	req.SetBasicAuth("admin", "password")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
	}
	return out
}

// TestDriversThroughTheAPI drives real BMC protocols through rivet dev:
// a redfish node on the embedded rivet-sim and an ipmi node on Debian's
// ipmi_sim are powered on and off, and the redfish node is deployed by
// virtual media and undeployed; each step is checked on the BMC itself.
func TestDriversThroughTheAPI(t *testing.T) {
	d := startDev(t, 3)

	t.Run("redfish power", func(t *testing.T) {
		for _, step := range []struct {
			args       []string
			state, bmc string
		}{
			{[]string{"power", "on"}, "power on", "On"},
			{[]string{"power", "off"}, "power off", "Off"},
			{[]string{"reboot", "--soft"}, "power on", "On"}, // from off: powered on
			{[]string{"power", "off", "--soft", "--power-timeout", "30"}, "power off", "Off"},
		} {
			d.rivet(t, append(append([]string{"node"}, step.args...), "sim-2")...)
			d.waitField(t, "sim-2", "power_state", step.state)
			if got := d.redfishGet(t, "/redfish/v1/Systems/node-2")["PowerState"]; got != step.bmc {
				t.Fatalf("after %v the BMC reports %v", step.args, got)
			}
		}
	})

	t.Run("redfish deploy and undeploy", func(t *testing.T) {
		d.rivet(t, "node", "deploy", "sim-1", "--wait", "--timeout", "60s")
		cd := d.redfishGet(t, "/redfish/v1/Managers/BMC-node-1/VirtualMedia/Cd")
		if cd["Inserted"] != true || !strings.HasSuffix(fmt.Sprint(cd["Image"]), "/images/rivet-dev.iso") {
			t.Fatalf("after deploy the CD slot is %v", cd)
		}
		if got := d.redfishGet(t, "/redfish/v1/Systems/node-1")["PowerState"]; got != "On" {
			t.Fatalf("after deploy the system is %v", got)
		}
		d.rivet(t, "node", "undeploy", "sim-1", "--wait", "--timeout", "60s")
		d.waitField(t, "sim-1", "provision_state", "available")
		if cd := d.redfishGet(t, "/redfish/v1/Managers/BMC-node-1/VirtualMedia/Cd"); cd["Inserted"] == true {
			t.Fatalf("after undeploy the CD slot still holds %v", cd["Image"])
		}
		if got := d.redfishGet(t, "/redfish/v1/Systems/node-1")["PowerState"]; got != "Off" {
			t.Fatalf("after undeploy the system is %v", got)
		}
	})

	t.Run("ipmi power", func(t *testing.T) {
		bmc := testenv.StartIPMISim(t, 1, false, "admin", "s3cret-ipmi")
		d.rivet(t, "node", "create", "name=ipmi-0", "driver=ipmi", "driver_info/ipmi_address=127.0.0.1",
			fmt.Sprintf("driver_info/ipmi_port:=%d", bmc.Port(0)), "driver_info/ipmi_username=admin",
			"driver_info/ipmi_password=s3cret-ipmi")
		for _, step := range []struct{ verb, state, file string }{{"on", "power on", "1"}, {"off", "power off", "0"}} {
			d.rivet(t, "node", "power", step.verb, "ipmi-0")
			d.waitField(t, "ipmi-0", "power_state", step.state)
			if got := bmc.File(t, 0, "power"); got != step.file {
				t.Fatalf("after power %s ipmi_sim's chassis power is %q", step.verb, got)
			}
		}
		// Soft power off reaches ipmi_sim as a soft shutdown, not a power down.
		d.rivet(t, "node", "power", "on", "ipmi-0")
		d.waitField(t, "ipmi-0", "power_state", "power on")
		before := len(bmc.File(t, 0, "events.log"))
		d.rivet(t, "node", "power", "off", "--soft", "ipmi-0")
		d.waitField(t, "ipmi-0", "power_state", "power off")
		if events := bmc.File(t, 0, "events.log")[before:]; !strings.Contains(events, "set shutdown 1") || strings.Contains(events, "set power 0") {
			t.Fatalf("soft power off sent, want a soft shutdown only:\n%s", events)
		}
		if show := d.rivet(t, "node", "show", "ipmi-0", "-f", "json"); strings.Contains(show, "s3cret-ipmi") {
			t.Fatal("the API showed the IPMI password")
		}
	})
	if strings.Contains(d.errOut.String(), "s3cret-ipmi") {
		t.Fatal("rivet dev logged the IPMI password")
	}
}
