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

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/test/testenv"
)

// TestIronicClientNodeHistory: `baremetal node history list` and `…
// history get` (python-ironicclient, which asks for 1.78) show what a real
// conductor recorded. The release table's HEAD is raised to 1.80 here, as
// the integrator does once every version below is served.
func TestIronicClientNodeHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: runs the Python CLI")
	}
	bin, err := exec.LookPath("baremetal")
	if err != nil {
		testenv.Unavailable(t, "baremetal CLI not on PATH (apt-get install python3-ironicclient)")
	}
	def := release.Default()
	head := def.Head()
	head.API = version.MustParse("1.80")
	table, err := release.NewTable(head, def.Releases()...)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: newStackPinned(t, release.NewPinner(table, release.Pin{}))}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	env := append(os.Environ(), "OS_AUTH_TYPE=none", "OS_ENDPOINT=http://"+ln.Addr().String(),
		"XDG_CACHE_HOME="+t.TempDir(), "HOME="+t.TempDir(), "OS_BAREMETAL_API_VERSION=latest")
	cli := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("baremetal %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	cli("node", "create", "--driver", "fake-hardware", "--name", "h1")
	cli("node", "manage", "h1", "--wait", "30")
	var list []map[string]any
	out := cli("node", "history", "list", "h1", "-f", "json")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	var verifying map[string]any
	for _, e := range list {
		if ev, _ := e["Description of the event"].(string); strings.Contains(ev, `to "verifying"`) {
			verifying = e
		}
	}
	if verifying == nil {
		t.Fatalf("no verifying transition listed:\n%s", out)
	}
	var one map[string]any
	out = cli("node", "history", "get", "h1", verifying["UUID"].(string), "-f", "json")
	if err := json.Unmarshal([]byte(out), &one); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if one["conductor"] != "cond-1" || one["event_type"] != "provisioning" || one["severity"] != "INFO" {
		t.Fatalf("history get: %v", one)
	}
}
