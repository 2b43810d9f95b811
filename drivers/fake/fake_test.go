package fake_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// pluginBin is rivet-driver-fake and rivetBin the rivet binary (which
// serves fake in its hidden plugin mode), built once per test binary.
var pluginBin, rivetBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rivet-fake-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginBin, err = plugintest.Build(dir, "github.com/rivetmetal/rivet/cmd/rivet-driver-fake", "rivet-driver-fake")
	if err == nil {
		rivetBin, err = plugintest.Build(dir, "github.com/rivetmetal/rivet/cmd/rivet", "rivet")
	}
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "build plugin binaries:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestConformance(t *testing.T) {
	levels := map[string]func(t *testing.T) plugintest.Target{
		"direct":     func(t *testing.T) plugintest.Target { return plugintest.Direct(t, fake.New(nil)) },
		"in-process": func(t *testing.T) plugintest.Target { return plugintest.InProcess(t, fake.New(nil)) },
		// How a conductor of release 0.1 (protocol 1 only) sees this driver.
		"in-process protocol 1": func(t *testing.T) plugintest.Target { return plugintest.InProcessAt(t, fake.New(nil), 1) },
		"subprocess": func(t *testing.T) plugintest.Target {
			return plugintest.Subprocess(t, host.Command{Path: pluginBin}, fake.HardwareType)
		},
		"subprocess via rivet plugin serve": func(t *testing.T) plugintest.Target {
			return plugintest.Subprocess(t, host.BuiltInCommands(rivetBin, "fake")["fake"], fake.HardwareType)
		},
	}
	for name, target := range levels {
		t.Run(name, func(t *testing.T) {
			tgt := target(t)
			wantCaps := []plugins.Capability{plugins.CapabilityCleanSteps, plugins.CapabilityNMI, plugins.CapabilitySoftPower}
			if fmt.Sprint(tgt.Info.Capabilities) != fmt.Sprint(wantCaps) {
				t.Errorf("capabilities %v, want %v", tgt.Info.Capabilities, wantCaps)
			}
			// raid, bios, firmware and console (version 1) need protocol
			// 2: a protocol-1 host never sees them.
			wantIfaces, wantRAID := 8, "[1]"
			if name == "in-process protocol 1" {
				wantIfaces, wantRAID = 4, "[]"
			}
			if len(tgt.Info.Interfaces) != wantIfaces || fmt.Sprint(tgt.Info.Interfaces[plugins.InterfaceRAID]) != wantRAID {
				t.Errorf("interfaces %v, want power, management, deploy, inspect (and raid, bios, firmware, console from protocol 2)", tgt.Info.Interfaces)
			}
			plugintest.Run(t, tgt, plugins.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", Name: "n1"})
		})
	}
}
