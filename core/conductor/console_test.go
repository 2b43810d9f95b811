package conductor

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// consoleFake is the hooked fake with a console interface that records
// the endpoints it was asked to serve.
type consoleFake struct {
	*hookedFake
	mu      sync.Mutex
	started map[string]plugins.ConsoleEndpoint // node UUID → endpoint
	stops   int
	fail    error
	starts  int
	pid     int // the "plugin process"; 0: not a plugin
}

// Registration makes the fake look like a plugin whose process is pid.
func (c *consoleFake) Registration() (host.Registration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return host.Registration{PID: c.pid}, c.pid != 0
}

func (c *consoleFake) StartConsole(_ context.Context, n plugins.Node, ep plugins.ConsoleEndpoint) (plugins.ConsoleInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return plugins.ConsoleInfo{}, c.fail
	}
	c.started[n.UUID] = ep
	c.starts++
	return plugins.ConsoleInfo{Type: plugins.ConsoleSocat, URL: "tcp://" + ep.HostPort()}, nil
}

func (c *consoleFake) StopConsole(_ context.Context, n plugins.Node) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.started, n.UUID)
	c.stops++
	return nil
}

func (c *consoleFake) endpoint(uuid string) (plugins.ConsoleEndpoint, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ep, ok := c.started[uuid]
	return ep, ok
}

// withoutConsole hides every method but Hardware's: a driver (plugin)
// without the console interface.
type withoutConsole struct{ Hardware }

// startConsoleHarness serves fake-hardware with a console, and
// "no-console-hw" with the plain hooked fake (a plugin without the console
// interface).
func startConsoleHarness(t *testing.T, dbh *db.DB, host string) (*harness, *consoleFake) {
	var cf *consoleFake
	h := startHarness(t, dbh, host, func(c *Config) {
		c.Console = ConsoleConfig{Address: "127.0.0.1", PortLow: 47100, PortHigh: 47199}
	}, func(hw *hookedFake) StaticDrivers {
		cf = &consoleFake{hookedFake: hw, started: map[string]plugins.ConsoleEndpoint{}}
		return StaticDrivers{fake.HardwareType: cf, "no-console-hw": withoutConsole{hw}}
	})
	// Start's console pass runs in the background: the tests that call
	// syncConsoles themselves count only their own starts.
	select {
	case <-h.svc.consolesSynced:
	case <-time.After(30 * time.Second):
		t.Fatal("the start-time console pass did not end")
	}
	return h, cf
}

func enrollWithConsole(t *testing.T, h *harness, driver, console string) *objects.Node {
	t.Helper()
	n := &objects.Node{Driver: driver, ConsoleInterface: &console}
	out, err := h.api.CreateNode(context.Background(), n)
	if err != nil {
		t.Fatalf("create_node: %v", err)
	}
	return out
}

// TestConsoleMode: set_console_mode starts the console in the background
// on an endpoint of [console] port_range and records console_enabled and
// console_info; get_console_information answers it; disabling stops it and
// get_console_information answers NodeConsoleNotEnabled. A node with
// console_interface no-console, or whose plugin lacks the console
// interface, gets UnsupportedDriverExtension (400) at once.
func TestConsoleMode(t *testing.T) {
	h, cf := startConsoleHarness(t, nil, "cond-a")
	ctx := context.Background()

	n := enrollWithConsole(t, h, fake.HardwareType, "fake")
	if _, err := h.api.GetConsoleInformation(ctx, n); err == nil {
		t.Fatal("console info of a node whose console is off")
	} else if class, code := classOf(err); class != "NodeConsoleNotEnabled" || code != 400 {
		t.Fatalf("got %s %d: %v", class, code, err)
	}
	if err := h.api.SetConsoleMode(ctx, n, true); err != nil {
		t.Fatal(err)
	}
	got := h.waitFor(n.UUID, "console enabled", func(n *objects.Node) bool { return n.ConsoleEnabled && n.Reservation == nil })
	ep, ok := cf.endpoint(n.UUID)
	if !ok || ep.Address != "127.0.0.1" || ep.Port < 47100 || ep.Port > 47199 {
		t.Fatalf("endpoint %+v (started %v)", ep, ok)
	}
	info, err := h.api.GetConsoleInformation(ctx, got)
	if err != nil || info.Type != "socat" || info.URL != "tcp://"+ep.HostPort() {
		t.Fatalf("info %+v, %v", info, err)
	}
	// Enabling again does nothing.
	if err := h.api.SetConsoleMode(ctx, got, true); err != nil {
		t.Fatal(err)
	}
	if err := h.api.SetConsoleMode(ctx, got, false); err != nil {
		t.Fatal(err)
	}
	off := h.waitFor(n.UUID, "console disabled", func(n *objects.Node) bool { return !n.ConsoleEnabled && n.Reservation == nil })
	if _, ok := cf.endpoint(n.UUID); ok {
		t.Fatal("console still running")
	}
	if _, ok := off.DriverInternalInfo[keyConsoleInfo]; ok {
		t.Fatalf("console_info kept after disabling: %v", off.DriverInternalInfo)
	}

	for name, node := range map[string]*objects.Node{
		"no-console":     enrollWithConsole(t, h, fake.HardwareType, "no-console"),
		"plugin without": enrollWithConsole(t, h, "no-console-hw", "no-console"),
	} {
		err := h.api.SetConsoleMode(ctx, node, true)
		if class, code := classOf(err); class != "UnsupportedDriverExtension" || code != 400 {
			t.Errorf("%s: got %s %d: %v", name, class, code, err)
		}
	}
	// The plugin without a console interface offers none but no-console.
	if ifaces := h.svc.drivers.Interfaces("no-console-hw"); slices.Contains(ifaces, plugins.InterfaceConsole) {
		t.Errorf("console negotiated for a driver without it: %v", ifaces)
	}
	bad := &objects.Node{Driver: "no-console-hw", ConsoleInterface: ptr("no-console-hw")}
	if _, err := h.api.CreateNode(ctx, bad); err == nil {
		t.Error("a console interface accepted for a driver without console")
	}

	// A driver failing to start leaves the console off with last_error.
	cf.mu.Lock()
	cf.fail = errors.New("BMC refused SOL")
	cf.mu.Unlock()
	n2 := enrollWithConsole(t, h, fake.HardwareType, "fake")
	if err := h.api.SetConsoleMode(ctx, n2, true); err != nil {
		t.Fatal(err)
	}
	failed := h.waitFor(n2.UUID, "last_error", func(n *objects.Node) bool { return n.LastError != nil && n.Reservation == nil })
	if failed.ConsoleEnabled || !strings.Contains(*failed.LastError, "Error enabling the console") || !strings.Contains(*failed.LastError, "BMC refused SOL") {
		t.Fatalf("console_enabled %v, last_error %q", failed.ConsoleEnabled, *failed.LastError)
	}
}

// TestConsoleTakeover: a node whose console was enabled on a conductor
// that died has its console restarted by the conductor the ring maps it
// to now (Ironic's _start_consoles), which rewrites console_info with its
// own endpoint; a second pass starts nothing; a console that cannot start
// is turned off with last_error, as Ironic does. Every dialect.
func TestConsoleTakeover(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		h, cf := startConsoleHarness(t, dbtest.Open(t, d), "cond-b")
		registerPeer(t, h.dbh, "dead-a", []string{fake.HardwareType}, true)

		n := enrollWithConsole(t, h, fake.HardwareType, "fake")
		n.ConsoleEnabled = true
		n.DriverInternalInfo = map[string]any{keyConsoleInfo: map[string]any{"type": "socat", "url": "tcp://10.0.0.1:10000"}, "other": "kept"}
		if err := h.store.Save(ctx, n); err != nil {
			t.Fatal(err)
		}
		off := enrollWithConsole(t, h, fake.HardwareType, "fake") // console off: left alone

		if got := h.svc.syncConsoles(ctx); got != 1 {
			t.Fatalf("started %d consoles, want 1", got)
		}
		ep, ok := cf.endpoint(n.UUID)
		if !ok {
			t.Fatal("console not restarted")
		}
		if _, ok := cf.endpoint(off.UUID); ok {
			t.Fatal("a console that is off was started")
		}
		after := h.node(n.UUID)
		info, _ := after.DriverInternalInfo[keyConsoleInfo].(map[string]any)
		if !after.ConsoleEnabled || info["url"] != "tcp://"+ep.HostPort() || after.DriverInternalInfo["other"] != "kept" || after.Reservation != nil {
			t.Fatalf("after takeover: enabled %v, driver_internal_info %v, reservation %v", after.ConsoleEnabled, after.DriverInternalInfo, deref(after.Reservation))
		}
		if got := h.svc.syncConsoles(ctx); got != 0 {
			t.Fatalf("second pass started %d consoles", got)
		}

		// The plugin process restarted (a crash): its consoles are gone,
		// and the periodic starts them on the new process.
		cf.mu.Lock()
		cf.pid, cf.started = 4242, map[string]plugins.ConsoleEndpoint{}
		starts := cf.starts
		cf.mu.Unlock()
		if got := h.svc.syncConsoles(ctx); got != 1 {
			t.Fatalf("after a plugin restart: started %d consoles, want 1", got)
		}
		if _, ok := cf.endpoint(n.UUID); !ok || cf.starts != starts+1 {
			t.Fatalf("console not restarted on the new plugin process (starts %d)", cf.starts)
		}
		if got := h.svc.syncConsoles(ctx); got != 0 {
			t.Fatalf("same plugin process: started %d", got)
		}
		after = h.node(n.UUID)

		// Disabled behind this conductor's back (another conductor's
		// work, a database edit): the periodic stops the local console.
		after.ConsoleEnabled = false
		if err := h.store.Save(ctx, after); err != nil {
			t.Fatal(err)
		}
		h.svc.syncConsoles(ctx)
		if _, ok := cf.endpoint(n.UUID); ok {
			t.Fatal("console of a node whose console is off still runs")
		}

		cf.mu.Lock()
		cf.fail = errors.New("BMC unreachable")
		cf.mu.Unlock()
		after = h.node(n.UUID)
		after.ConsoleEnabled = true
		if err := h.store.Save(ctx, after); err != nil {
			t.Fatal(err)
		}
		if got := h.svc.syncConsoles(ctx); got != 0 {
			t.Fatalf("started %d", got)
		}
		failed := h.node(n.UUID)
		if failed.ConsoleEnabled || failed.LastError == nil || !strings.Contains(*failed.LastError, "BMC unreachable") {
			t.Fatalf("failed restart: enabled %v, last_error %v", failed.ConsoleEnabled, deref(failed.LastError))
		}
	})
}

// TestConsolePorts: ports come from the range, skip ports in use, and a
// node's ipmi_terminal_port is used as is.
func TestConsolePorts(t *testing.T) {
	var c consoles
	cfg := ConsoleConfig{Address: "127.0.0.1", PortLow: 47200, PortHigh: 47201}
	a, err := c.allocate(cfg, "a", 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.allocate(cfg, "b", 0)
	if err != nil || a == b {
		t.Fatalf("a %d b %d %v", a, b, err)
	}
	if again, _ := c.allocate(cfg, "a", 0); again != a {
		t.Fatalf("a moved from %d to %d", a, again)
	}
	if _, err := c.allocate(cfg, "c", 0); err == nil || !strings.Contains(err.Error(), "port_range") {
		t.Fatalf("full range: %v", err)
	}
	if _, err := c.allocate(cfg, "c", a); err == nil {
		t.Fatal("a fixed port taken by another node was accepted")
	}
	c.release("a")
	if p, err := c.allocate(cfg, "c", 0); err != nil || p != a {
		t.Fatalf("released port not reused: %d %v", p, err)
	}
	for v, ok := range map[any]bool{float64(10022): true, "10022": true, float64(0): false, "x": false, float64(70000): false} {
		_, err := terminalPort(&objects.Node{DriverInfo: map[string]any{keyTerminalPort: v}})
		if (err == nil) != ok {
			t.Errorf("%v: %v", v, err)
		}
	}
}
