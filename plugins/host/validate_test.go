package host_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// TestValidateOldPlugin: the test plugin has no Validate and declares no
// properties, as a plugin of an older SDK: the host's handle answers
// ErrNotSupported for both, without a round trip (the plugin still serves
// its other calls), so the conductor falls back to its own checks.
func TestValidateOldPlugin(t *testing.T) {
	log, _ := newLog(slog.LevelInfo)
	m, err := host.New(host.Config{Logger: log, WatchInterval: -1,
		BuiltIn: map[string]host.Command{"test": {Path: testPluginBin}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := m.Driver("test-hardware")
	if err != nil {
		t.Fatalf("%v (refused: %v)", err, m.Refused())
	}
	reg, _ := d.Registration()
	if reg.Has(plugins.CapabilityValidate) || reg.Has(plugins.CapabilityProperties) {
		t.Fatalf("capabilities %v advertise what the plugin lacks", reg.Capabilities)
	}
	if err := d.Validate(ctx, plugins.Node{UUID: "n1"}, plugins.InterfacePower); !errors.Is(err, plugins.ErrNotSupported) {
		t.Errorf("Validate: %v, want ErrNotSupported", err)
	}
	if _, err := d.Properties(ctx); !errors.Is(err, plugins.ErrNotSupported) {
		t.Errorf("Properties: %v, want ErrNotSupported", err)
	}
	if _, err := d.GetPowerState(ctx, plugins.Node{UUID: "n1"}); err != nil {
		t.Errorf("the plugin's other calls: %v", err)
	}
}
