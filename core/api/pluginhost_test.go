package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// buildFakePlugin builds this tree's rivet-driver-fake and returns its path.
func buildFakePlugin(t *testing.T) string {
	t.Helper()
	bin, err := plugintest.Build(t.TempDir(), "github.com/rivetmetal/rivet/cmd/rivet-driver-fake", "rivet-driver-fake")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// startFakePlugin runs the fake-hardware plugin at bin under a plugin host
// of this release (closed when the test ends) and returns the host with
// fake-hardware's registration; the test fails when it does not register.
func startFakePlugin(t *testing.T, bin string) (*host.Manager, host.Registration) {
	t.Helper()
	m, err := host.New(host.Config{BuiltIn: map[string]host.Command{"fake": {Path: bin}}, WatchInterval: -1,
		HostVersion: release.Current})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	reg, ok := m.ByHardwareType()[fake.HardwareType]
	if !ok {
		t.Fatalf("fake-hardware not registered: %v", m.Refused())
	}
	return m, reg
}
