package plugins_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// consoleDriver serves power and the console interface, recording calls.
type consoleDriver struct {
	statefulHardV2
	mu    sync.Mutex
	calls []string
	info  plugins.ConsoleInfo
}

func (d *consoleDriver) StartConsole(_ context.Context, n plugins.Node, ep plugins.ConsoleEndpoint) (plugins.ConsoleInfo, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, "start "+n.UUID+" "+ep.HostPort())
	return d.info, nil
}

func (d *consoleDriver) StopConsole(_ context.Context, n plugins.Node) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, "stop "+n.UUID)
	return nil
}

// TestConsoleInterfaceOverGRPC: a driver implementing ConsoleInterface
// advertises console version 1 under protocol 2 only; over protocol 2 the
// calls and the console info cross gRPC; over protocol 1 (an older host or
// plugin) the interface is not negotiated and calls answer ErrNotSupported.
// A driver returning an incomplete console info is refused.
func TestConsoleInterfaceOverGRPC(t *testing.T) {
	d := &consoleDriver{info: plugins.ConsoleInfo{Type: "socat", URL: "tcp://127.0.0.1:10000"}}
	info, err := plugins.Describe(d, []int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(info.Interfaces[plugins.InterfaceConsole], []int{1}) {
		t.Fatalf("console versions %v", info.Interfaces[plugins.InterfaceConsole])
	}
	if info1, _ := plugins.Describe(d, []int{1}); info1.Interfaces[plugins.InterfaceConsole] != nil {
		t.Fatalf("protocol 1 advertises console %v", info1.Interfaces[plugins.InterfaceConsole])
	}

	node := plugins.Node{UUID: "1be26c0b-03f2-4d2d-ae87-c02d7d1ee6d0", HardwareType: "hardv2"}
	tgt := plugintest.InProcessAt(t, d, 2)
	c := tgt.Driver.(plugins.ConsoleInterface)
	got, err := c.StartConsole(context.Background(), node, plugins.ConsoleEndpoint{Address: "::1", Port: 10001})
	if err != nil || got != d.info {
		t.Fatalf("start: %+v, %v", got, err)
	}
	if err := c.StopConsole(context.Background(), node); err != nil {
		t.Fatal(err)
	}
	if want := []string{"start " + node.UUID + " [::1]:10001", "stop " + node.UUID}; !slices.Equal(d.calls, want) {
		t.Fatalf("calls %q, want %q", d.calls, want)
	}

	old := plugintest.InProcessAt(t, d, 1)
	if _, ok := old.Info.Interfaces[plugins.InterfaceConsole]; ok {
		t.Fatal("console negotiated over protocol 1")
	}
	if _, err := old.Driver.(plugins.ConsoleInterface).StartConsole(context.Background(), node, plugins.ConsoleEndpoint{}); !errors.Is(err, plugins.ErrNotSupported) {
		t.Fatalf("protocol 1 start: %v", err)
	}

	d.info = plugins.ConsoleInfo{Type: "socat"}
	if _, err := c.StartConsole(context.Background(), node, plugins.ConsoleEndpoint{Address: "127.0.0.1", Port: 1}); err == nil {
		t.Fatal("an info without url passed")
	}
}
