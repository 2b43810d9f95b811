package api_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/test/testenv"
)

// TestIronicClientCLI drives Debian's python3-ironicclient `baremetal` CLI
// (5.0.1, which asks for 1.78 and downgrades on 406) against the API over a
// real conductor: enroll, ports, manage/provide/deploy/undeploy with
// --wait, power, maintenance, boot device, VIFs, NMI, validate and delete.
// Skipped locally without the CLI; required under CI=true.
func TestIronicClientCLI(t *testing.T) {
	c := startCLI(t, newStack(t))
	cli, obj := c.cli, c.obj
	n := obj(cli("node", "create", "--driver", "fake-hardware", "--name", "n1",
		"--driver-info", "ipmi_password=hunter2", "--driver-info", "ipmi_address=10.0.0.1", "-f", "json"))
	id, _ := n["uuid"].(string)
	if n["provision_state"] != "enroll" || id == "" {
		t.Fatalf("created %v", n)
	}
	cli("port", "create", "52:54:00:00:00:cc", "--node", id)
	cli("node", "set", "n1", "--extra", "rack=r1")
	for _, verb := range []string{"manage", "provide", "deploy"} {
		cli("node", verb, "n1", "--wait", "30")
	}
	show := obj(cli("node", "show", "n1", "-f", "json"))
	if show["provision_state"] != "active" || show["driver_info"].(map[string]any)["ipmi_password"] != "******" {
		t.Errorf("after deploy: state %v, driver_info %v", show["provision_state"], show["driver_info"])
	}
	cli("node", "power", "off", "n1")
	cli("node", "maintenance", "set", "n1", "--reason", "fan")
	cli("node", "maintenance", "unset", "n1")
	cli("node", "boot", "device", "set", "n1", "pxe")
	cli("node", "vif", "attach", "n1", "vif-1")
	if out := cli("node", "vif", "list", "n1", "-f", "json"); !strings.Contains(out, `"ID": "vif-1"`) {
		t.Errorf("vif list: %s", out)
	}
	cli("node", "vif", "detach", "n1", "vif-1")
	if out := cli("node", "vif", "list", "n1", "-f", "value"); strings.TrimSpace(out) != "" {
		t.Errorf("vif list after detach: %q", out)
	}
	cli("node", "inject", "nmi", "n1")
	cli("node", "validate", "n1")
	if out := cli("node", "list", "-f", "json"); !strings.Contains(out, id) {
		t.Errorf("node list lacks %s: %s", id, out)
	}
	if out := cli("driver", "list", "-f", "json"); !strings.Contains(out, "fake-hardware") {
		t.Errorf("driver list: %s", out)
	}
	cli("node", "undeploy", "n1", "--wait", "30")
	cli("node", "delete", "n1")
	for _, out := range []string{cli("node", "list", "-f", "json"), cli("port", "list", "-f", "json")} {
		if strings.Contains(out, id) || strings.Contains(out, "52:54:00:00:00:cc") {
			t.Errorf("deleted node still listed: %s", out)
		}
	}
}

// cliRunner runs Debian's `baremetal` CLI against one API handler.
type cliRunner struct {
	t   *testing.T
	bin string
	env []string
}

// startCLI serves h on a loopback port for the `baremetal` CLI, which asks
// for the latest version it knows (OS_BAREMETAL_API_VERSION=latest). It
// skips in -short mode, and without the CLI (a failure under CI=true).
func startCLI(t *testing.T, h http.Handler) *cliRunner {
	t.Helper()
	if testing.Short() {
		t.Skip("slow: runs the Python CLI")
	}
	bin, err := exec.LookPath("baremetal")
	if err != nil {
		testenv.Unavailable(t, "baremetal CLI not on PATH (apt-get install python3-ironicclient)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	env := append(os.Environ(), "OS_AUTH_TYPE=none", "OS_ENDPOINT=http://"+ln.Addr().String(),
		"XDG_CACHE_HOME="+t.TempDir(), "HOME="+t.TempDir(), "OS_BAREMETAL_API_VERSION=latest")
	return &cliRunner{t: t, bin: bin, env: env}
}

// run runs the CLI and returns its combined output.
func (c *cliRunner) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// cli runs the CLI, failing the test when it fails.
func (c *cliRunner) cli(args ...string) string {
	c.t.Helper()
	out, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("baremetal %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// obj decodes a `-f json` output.
func (c *cliRunner) obj(out string) map[string]any {
	c.t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		c.t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return m
}

// ironicCLI is startCLI's runner as a function, failing the test on a
// non-zero exit.
func ironicCLI(t *testing.T, h http.Handler) func(args ...string) string {
	t.Helper()
	return startCLI(t, h).cli
}

// baremetalCLI is startCLI's runner and JSON decoder as functions.
func baremetalCLI(t *testing.T, h http.Handler) (cli func(args ...string) string, obj func(out string) map[string]any) {
	t.Helper()
	c := startCLI(t, h)
	return c.cli, c.obj
}
