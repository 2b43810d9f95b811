package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/test/testenv"
)

// TestIronicClientAgainstDev drives Debian's python3-ironicclient against
// rivet dev, as an admin with existing Ironic tooling would: its
// microversion negotiation must land on HEAD's API (it asks for 1.78 and
// downgrades on the 406), then the drivers' interfaces (1.30), a node
// lifecycle with --fields, set/unset, an interface (1.31), power,
// manage/provide/deploy/undeploy, ports, VIFs (1.28), NMI (1.29) and
// delete, and soft power with a timeout on a redfish node (1.27).
func TestIronicClientAgainstDev(t *testing.T) {
	bin, err := exec.LookPath("baremetal")
	if err != nil {
		testenv.Unavailable(t, "baremetal CLI not on PATH (apt-get install python3-ironicclient)")
	}
	d := startDev(t, 1)
	env := append(os.Environ(), "OS_AUTH_TYPE=none", "OS_ENDPOINT="+d.URL+"/v1", "HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir())
	run := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	cli := func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatalf("baremetal %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}

	// The client starts at its own latest (5.0.1: 1.78) and negotiates
	// down only when the server's maximum is lower: either way it must
	// speak the lower of the two.
	head := release.Default().Head().API
	debug := cli("--debug", "node", "list")
	m := regexp.MustCompile(`Using bare metal API version (\d+\.\d+)`).FindStringSubmatch(debug)
	if m == nil {
		t.Fatalf("the client did not say which version it starts at:\n%s", tail(debug, 30))
	}
	want := version.MustParse(m[1])
	if head.Less(want) {
		want = head
		if !strings.Contains(debug, "Negotiated API version is "+want.String()) {
			t.Fatalf("negotiation did not land on %s:\n%s", want, tail(debug, 30))
		}
	}
	if !strings.Contains(debug, "X-OpenStack-Ironic-API-Version: "+want.String()) {
		t.Fatalf("the client does not speak %s (the lower of its %s and Rivet's %s):\n%s", want, m[1], head, tail(debug, 30))
	}
	var drv map[string]any
	if err := json.Unmarshal([]byte(cli("driver", "show", "fake-hardware", "-f", "json")), &drv); err != nil {
		t.Fatal(err)
	}
	if drv["default_deploy_interface"] != "fake" || drv["enabled_inspect_interfaces"] != "agent, fake, no-inspect" {
		t.Fatalf("driver show fake-hardware: %v", drv)
	}

	var n map[string]any
	if err := json.Unmarshal([]byte(cli("node", "create", "--driver", "fake-hardware", "--name", "bm-1",
		"--driver-info", "ipmi_password=e2e-secret", "-f", "json")), &n); err != nil {
		t.Fatal(err)
	}
	if n["provision_state"] != "enroll" {
		t.Fatalf("created %v", n)
	}
	if out := cli("node", "list", "--fields", "name", "provision_state", "-f", "value"); !strings.Contains(out, "bm-1 enroll") {
		t.Fatalf("node list --fields: %s", out)
	}
	cli("node", "set", "bm-1", "--property", "cpus=8", "--inspect-interface", "no-inspect")
	if out := cli("node", "show", "bm-1", "-c", "inspect_interface", "-c", "deploy_interface", "-f", "value"); out != "fake\nno-inspect\n" {
		t.Fatalf("node show interfaces: %q", out)
	}
	cli("node", "unset", "bm-1", "--property", "cpus")
	cli("node", "power", "on", "bm-1")
	cli("node", "power", "off", "bm-1")
	for _, verb := range []string{"manage", "provide", "deploy", "undeploy"} {
		cli("node", verb, "bm-1", "--wait", "60")
	}
	cli("port", "create", "52:54:00:e2:e2:01", "--node", n["uuid"].(string))
	if out := cli("port", "list", "-f", "value"); !strings.Contains(out, "52:54:00:e2:e2:01") {
		t.Fatalf("port list: %s", out)
	}
	// VIFs (1.28): attach records the VIF on the free port, as Nova does.
	cli("node", "vif", "attach", "bm-1", "vif-e2e", "--vif-info", "tag=blue")
	if out := cli("node", "vif", "list", "bm-1", "-f", "value"); strings.TrimSpace(out) != "vif-e2e" {
		t.Fatalf("vif list: %q", out)
	}
	if out := cli("port", "list", "--fields", "address", "internal_info", "-f", "value"); !strings.Contains(out, "'tenant_vif_port_id': 'vif-e2e'") {
		t.Fatalf("port internal_info after attach: %s", out)
	}
	if out, err := run("node", "vif", "attach", "bm-1", "vif-e2e"); err == nil || !strings.Contains(out, "already attached") {
		t.Fatalf("attaching twice: %v\n%s", err, out)
	}
	cli("node", "vif", "detach", "bm-1", "vif-e2e")
	if out := cli("node", "vif", "list", "bm-1", "-f", "value"); strings.TrimSpace(out) != "" {
		t.Fatalf("vif list after detach: %q", out)
	}
	cli("node", "inject", "nmi", "bm-1")
	show := cli("node", "show", "bm-1", "-f", "json")
	if strings.Contains(show, "e2e-secret") || !strings.Contains(show, `"provision_state": "available"`) {
		t.Fatalf("node show after the lifecycle: %s", show)
	}
	cli("node", "delete", "bm-1")
	if out := cli("node", "list", "-f", "value"); strings.Contains(out, "bm-1") {
		t.Fatalf("deleted node still listed: %s", out)
	}

	// A redfish node on the embedded simulator, enrolled the Ironic way.
	cli("node", "create", "--driver", "redfish", "--name", "bm-rf",
		"--driver-info", "redfish_address="+d.SimURL, "--driver-info", "redfish_system_id=/redfish/v1/Systems/node-0",
		"--driver-info", "redfish_username=admin", "--driver-info", "redfish_password=password",
		"--driver-info", "redfish_verify_ca=false")
	if out := cli("node", "show", "bm-rf", "--fields", "name", "driver", "-f", "value"); !strings.Contains(out, "redfish") {
		t.Fatalf("node show --fields: %s", out)
	}
	cli("node", "power", "on", "bm-rf")
	d.waitField(t, "bm-rf", "power_state", "power on")
	if got := d.redfishGet(t, "/redfish/v1/Systems/node-0")["PowerState"]; got != "On" {
		t.Fatalf("baremetal power on: the BMC reports %v", got)
	}
	cli("node", "power", "off", "--soft", "--power-timeout", "30", "bm-rf")
	d.waitField(t, "bm-rf", "power_state", "power off")
	if got := d.redfishGet(t, "/redfish/v1/Systems/node-0")["PowerState"]; got != "Off" {
		t.Fatalf("baremetal soft power off: the BMC reports %v", got)
	}
	cli("node", "reboot", "--soft", "bm-rf")
	d.waitField(t, "bm-rf", "power_state", "power on")
	// NMI (1.29) reaches the BMC: the simulator takes it only while On.
	cli("node", "inject", "nmi", "bm-rf")
	cli("node", "power", "off", "bm-rf")
	d.waitField(t, "bm-rf", "power_state", "power off")
	if out, err := run("node", "inject", "nmi", "bm-rf"); err == nil || !strings.Contains(out, "inject NMI") {
		t.Fatalf("NMI to a powered-off system: %v\n%s", err, out)
	}
	cli("node", "delete", "bm-rf")
}
