package api_test

import (
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// TestIronicClientVolumeAndPortFields drives Debian's `baremetal` CLI
// (python3-ironicclient 5.0.1, API 1.78) against the API over a real
// conductor serving up to 1.110 (a test-only maximum): volume connectors
// and targets (1.32) and the port fields it knows, physical_network (1.34)
// and is_smartnic (1.53). Skipped locally without the CLI; required under
// CI=true.
func TestIronicClientVolumeAndPortFields(t *testing.T) {
	r := startCLI(t, newStackWith(t, release.NewPinner(release.Default(), release.Pin{}),
		conductor.StaticDrivers{fake.HardwareType: fake.New(nil)}, api.WithTestMaxAPI("1.110")))
	run, cli, obj := r.run, r.cli, r.obj
	id := obj(cli("node", "create", "--driver", "fake-hardware", "--name", "n1", "-f", "json"))["uuid"].(string)

	conn := obj(cli("volume", "connector", "create", "--node", id, "--type", "iqn",
		"--connector-id", "iqn.2017-07.org.example:01", "-f", "json"))
	cu, _ := conn["uuid"].(string)
	if conn["type"] != "iqn" || cu == "" {
		t.Fatalf("connector created: %v", conn)
	}
	tg := obj(cli("volume", "target", "create", "--node", id, "--type", "iscsi", "--boot-index", "0",
		"--volume-id", "vol-1", "--property", "auth_password=s3cret", "-f", "json"))
	tu, _ := tg["uuid"].(string)
	if tg["properties"].(map[string]any)["auth_password"] != "******" {
		t.Errorf("target created: %v", tg)
	}
	if out := cli("volume", "connector", "list", "--node", "n1", "-f", "json"); !strings.Contains(out, cu) {
		t.Errorf("connector list --node n1: %s", out)
	}
	if out := cli("volume", "target", "list", "--long", "-f", "json"); !strings.Contains(out, tu) || !strings.Contains(out, "vol-1") {
		t.Errorf("target list --long: %s", out)
	}
	if out, err := run("volume", "connector", "set", cu, "--extra", "a=b"); err == nil || !strings.Contains(out, "can not be performed on node") {
		t.Errorf("connector set with the power unknown: %v\n%s", err, out)
	}
	cli("node", "power", "off", "n1")
	cli("volume", "connector", "set", cu, "--extra", "a=b")
	if got := obj(cli("volume", "connector", "show", cu, "-f", "json")); got["extra"].(map[string]any)["a"] != "b" {
		t.Errorf("connector after set: %v", got)
	}
	cli("volume", "target", "set", tu, "--boot-index", "1")
	cli("volume", "connector", "delete", cu)
	cli("volume", "target", "delete", tu)
	if out := cli("volume", "connector", "list", "-f", "value"); strings.TrimSpace(out) != "" {
		t.Errorf("connectors left: %q", out)
	}

	p := obj(cli("port", "create", "52:54:00:00:0e:01", "--node", id, "--physical-network", "physnet1",
		"--is-smartnic", "--local-link-connection", "port_id=p1", "--local-link-connection", "hostname=h1", "-f", "json"))
	if p["physical_network"] != "physnet1" || p["is_smartnic"] != true {
		t.Errorf("port created: %v", p)
	}
	cli("port", "set", p["uuid"].(string), "--physical-network", "physnet2")
	if got := obj(cli("port", "show", p["uuid"].(string), "-f", "json")); got["physical_network"] != "physnet2" {
		t.Errorf("port after set: %v", got)
	}
	cli("node", "delete", "n1")
}
