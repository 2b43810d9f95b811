package plugintest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/plugins/internal/wire"
)

// Target is a driver under test at one level.
type Target struct {
	// Level names the level ("direct", "in-process", "subprocess").
	Level string
	// Driver implements whichever capability interfaces the level exposes.
	Driver any
	// Info is what the driver advertises.
	Info plugins.Info
	// Remote is true when calls cross a process or gRPC boundary, where
	// every method exists and unsupported ones answer ErrNotSupported.
	Remote bool
}

// Direct targets the Go value itself.
func Direct(t testing.TB, d plugins.Driver) Target {
	t.Helper()
	info, err := plugins.Describe(d, plugins.Protocols())
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	return Target{Level: "direct", Driver: d, Info: info}
}

// InProcess targets d through its gRPC service over go-plugin's in-memory
// connection (plugin.TestPluginGRPCConn), after Info and Configure, at the
// SDK's highest protocol major.
func InProcess(t testing.TB, d plugins.Driver) Target {
	t.Helper()
	return InProcessAt(t, d, plugins.ProtocolVersion)
}

// InProcessAt is InProcess at protocol major p, negotiating the interface
// versions p carries: InProcessAt(t, d, 1) is how a host of the 0.1 SDK
// sees d.
func InProcessAt(t testing.TB, d plugins.Driver, p int) Target {
	t.Helper()
	client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{
		wire.PluginName: &host.GRPCPlugin{Driver: d, Protocol: p},
	})
	// Close asks the server to stop (go-plugin's controller Shutdown); stopping
	// it here as well would race with that.
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(wire.PluginName)
	if err != nil {
		t.Fatalf("dispense: %v", err)
	}
	c := raw.(*host.Client)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatalf("info: %v", err)
	}
	neg := plugins.Negotiation{Protocol: p, Interfaces: map[plugins.Interface]int{}}
	for iface, vs := range plugins.InterfaceVersionsFor(p, info.Interfaces) {
		neg.Interfaces[iface] = vs[len(vs)-1]
	}
	if err := c.Configure(ctx, neg); err != nil {
		t.Fatalf("configure: %v", err)
	}
	// The target advertises what was negotiated, as Subprocess does.
	info.Interfaces = map[plugins.Interface][]int{}
	for iface, v := range neg.Interfaces {
		info.Interfaces[iface] = []int{v}
	}
	level := "in-process"
	if p != plugins.ProtocolVersion {
		level = fmt.Sprintf("in-process protocol %d", p)
	}
	return Target{Level: level, Driver: c, Info: info, Remote: true}
}

// Subprocess targets the plugin binary at cmd, started and negotiated by a
// plugins/host Manager, serving hardwareType. The Manager is closed (and
// the process killed) when the test ends.
func Subprocess(t testing.TB, cmd host.Command, hardwareType string) Target {
	t.Helper()
	m, err := host.New(host.Config{BuiltIn: map[string]host.Command{"under-test": cmd}, WatchInterval: -1})
	if err != nil {
		t.Fatalf("host: %v", err)
	}
	t.Cleanup(m.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		t.Fatalf("host start: %v", err)
	}
	if refused := m.Refused()["under-test"]; refused != nil {
		t.Fatalf("plugin refused: %v", refused)
	}
	d, err := m.Driver(hardwareType)
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := d.Registration()
	info := plugins.Info{Name: reg.PluginName, Version: reg.PluginVersion, HardwareTypes: reg.HardwareTypes,
		Interfaces: map[plugins.Interface][]int{}, Capabilities: reg.Capabilities}
	for iface, v := range reg.Interfaces {
		info.Interfaces[iface] = []int{v}
	}
	return Target{Level: "subprocess", Driver: d, Info: info, Remote: true}
}

// Build compiles the main package pkg (an import path or ./path) into dir
// and returns the binary's path. Call it once per test binary (TestMain).
func Build(dir, pkg, name string) (string, error) {
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return out, cmd.Run()
}

// FuzzWorker reports whether this test binary runs as a `go test -fuzz`
// worker, which only runs the fuzz target: a TestMain skips building
// plugin binaries there (a build in every worker stalls fuzzing).
func FuzzWorker() bool {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.fuzzworker") {
			return true
		}
	}
	return false
}
