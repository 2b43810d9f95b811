package api_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// consoleStack is newStack whose fake-hardware serves real (loopback)
// consoles on ports of [console] port_range lo:hi.
func consoleStack(t *testing.T, pinner *release.Pinner, lo, hi int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(consoleHandler(t, pinner, lo, hi))
	t.Cleanup(srv.Close)
	return srv
}

func consoleHandler(t *testing.T, pinner *release.Pinner, lo, hi int) http.Handler {
	t.Helper()
	drv := fake.New(nil)
	t.Cleanup(func() { _ = drv.Close(context.Background()) })
	return newStackTuned(t, pinner, conductor.StaticDrivers{fake.HardwareType: drv}, func(c *conductor.Config) {
		c.Console = conductor.ConsoleConfig{Address: "127.0.0.1", PortLow: lo, PortHigh: hi}
	})
}

// waitConsole polls GET .../states/console until console_enabled is want.
func waitConsole(t *testing.T, base, node string, want bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, out := httpCall(t, base, "1.31", "GET", "/v1/nodes/"+node+"/states/console", "")
		if code != 200 {
			t.Fatalf("GET console: %d %v", code, out)
		}
		if out["console_enabled"] == want {
			return out
		}
		if time.Now().After(deadline) {
			_, n := httpCall(t, base, "1.31", "GET", "/v1/nodes/"+node, "")
			t.Fatalf("console_enabled never became %v: %v (last_error %v)", want, out, n["last_error"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConsoleThroughRealConductor: PUT .../states/console {"enabled": true}
// answers 202 with the console's Location and the conductor starts the
// console; GET then answers console_enabled true and console_info
// {"type": "socat", "url": "tcp://127.0.0.1:<port of port_range>"}, and the
// URL reaches the node's serial line; disabling turns it off and closes the
// endpoint. A node with no-console gets Ironic's 400; a body without
// enabled is 400.
func TestConsoleThroughRealConductor(t *testing.T) {
	srv := consoleStack(t, release.NewPinner(release.Default(), release.Pin{}), 47300, 47349)
	if code, out := httpCall(t, srv.URL, "1.31", "POST", "/v1/nodes", `{"name":"n1","driver":"fake-hardware","console_interface":"fake"}`); code != 201 {
		t.Fatalf("create: %d %v", code, out)
	}
	if code, out := httpCall(t, srv.URL, "1.31", "POST", "/v1/nodes", `{"name":"n2","driver":"fake-hardware"}`); code != 201 || out["console_interface"] != "no-console" {
		t.Fatalf("create: %d %v", code, out)
	}
	if out := waitConsole(t, srv.URL, "n1", false); out["console_info"] != nil {
		t.Fatalf("console off: %v", out)
	}

	req, _ := http.NewRequest("PUT", srv.URL+"/v1/nodes/n1/states/console", strings.NewReader(`{"enabled": true}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(api.HeaderVersion, "1.31")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 202 || resp.Header.Get("Location") != srv.URL+"/v1/nodes/n1/states/console" {
		t.Fatalf("PUT: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	out := waitConsole(t, srv.URL, "n1", true)
	info, _ := out["console_info"].(map[string]any)
	url, _ := info["url"].(string)
	if info["type"] != "socat" || !strings.HasPrefix(url, "tcp://127.0.0.1:473") {
		t.Fatalf("console_info %v", out["console_info"])
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	greeting, err := bufio.NewReader(conn).ReadString('\n')
	conn.Close()
	if err != nil || !strings.Contains(greeting, "serial console") {
		t.Fatalf("greeting %q %v", greeting, err)
	}
	if _, n := httpCall(t, srv.URL, "1.31", "GET", "/v1/nodes/n1/states", ""); n["console_enabled"] != true {
		t.Fatalf("states: %v", n)
	}

	if code, out := httpCall(t, srv.URL, "1.31", "PUT", "/v1/nodes/n1/states/console", `{"enabled": false}`); code != 202 {
		t.Fatalf("disable: %d %v", code, out)
	}
	if out := waitConsole(t, srv.URL, "n1", false); out["console_info"] != nil {
		t.Fatalf("console off: %v", out)
	}
	if c, err := net.Dial("tcp", strings.TrimPrefix(url, "tcp://")); err == nil {
		c.Close()
		t.Fatal("the console endpoint still listens")
	}

	code, out := httpCall(t, srv.URL, "1.31", "PUT", "/v1/nodes/n2/states/console", `{"enabled": true}`)
	if msg, _ := out["error_message"].(string); code != 400 || !strings.Contains(msg, "Driver fake-hardware does not support console") {
		t.Fatalf("no-console: %d %v", code, out)
	}
	if code, _ := httpCall(t, srv.URL, "1.31", "PUT", "/v1/nodes/n1/states/console", `{}`); code != 400 {
		t.Fatalf("no enabled: %d", code)
	}
}

// TestConsolePinnedToTheOldRelease: pinned to 0.2, whose conductors lack
// set_console_mode (RPC 1.5), PUT .../states/console is 406 before anything
// reaches the conductor, and GET answers the console off as 0.2 did.
func TestConsolePinnedToTheOldRelease(t *testing.T) {
	table := release.Default()
	pin, err := table.ParsePin("0.2")
	if err != nil {
		t.Fatal(err)
	}
	srv := consoleStack(t, release.NewPinner(table, pin), 47350, 47359)
	if code, out := httpCall(t, srv.URL, "1.31", "POST", "/v1/nodes", `{"name":"n1","driver":"fake-hardware","console_interface":"fake"}`); code != 201 {
		t.Fatalf("create: %d %v", code, out)
	}
	if code, out := httpCall(t, srv.URL, "1.31", "PUT", "/v1/nodes/n1/states/console", `{"enabled": true}`); code != 406 {
		t.Fatalf("pinned PUT: %d %v", code, out)
	}
	if out := waitConsole(t, srv.URL, "n1", false); out["console_info"] != nil {
		t.Fatalf("pinned GET: %v", out)
	}
}

// TestIronicClientConsole: Debian's python3-ironicclient `baremetal node
// console enable/show/disable` against the API over a real conductor; the
// URL `console show` prints reaches the node's serial line. Skipped locally
// without the CLI; required under CI=true.
func TestIronicClientConsole(t *testing.T) {
	c := startCLI(t, consoleHandler(t, release.NewPinner(release.Default(), release.Pin{}), 47360, 47369))
	c.cli("node", "create", "--driver", "fake-hardware", "--name", "n1", "--console-interface", "fake")
	show := func() map[string]any {
		return c.obj(c.cli("node", "console", "show", "n1", "-f", "json"))
	}
	if out := show(); out["console_enabled"] != false || out["console_info"] != nil {
		t.Fatalf("before: %v", out)
	}
	c.cli("node", "console", "enable", "n1")
	var out map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for out = show(); out["console_enabled"] != true; out = show() {
		if time.Now().After(deadline) {
			t.Fatalf("console never enabled: %v", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	info, _ := out["console_info"].(map[string]any)
	url, _ := info["url"].(string)
	if info["type"] != "socat" || !strings.HasPrefix(url, "tcp://127.0.0.1:4736") {
		t.Fatalf("console_info %v", out)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	c.cli("node", "console", "disable", "n1")
	deadline = time.Now().Add(30 * time.Second)
	for out = show(); out["console_enabled"] != false; out = show() {
		if time.Now().After(deadline) {
			t.Fatalf("console never disabled: %v", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if out["console_info"] != nil {
		t.Fatalf("after disable: %v", out)
	}
	c.cli("node", "create", "--driver", "fake-hardware", "--name", "n2")
	if msg, err := c.run("node", "console", "enable", "n2"); err == nil || !strings.Contains(msg, "does not support console") {
		t.Fatalf("no-console enable: %v %s", err, msg)
	}
}
