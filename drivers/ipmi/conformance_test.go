package ipmi_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/rivetmetal/rivet/drivers/ipmi"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// pluginBin is rivet-driver-ipmi, built once per test binary into binDir.
var pluginBin, binDir string

// rivetBin builds the rivet binary (which serves ipmi in its hidden plugin
// mode) on first use, so that a broken cmd/rivet fails only the level that
// needs it.
var rivetBin = sync.OnceValues(func() (string, error) {
	return plugintest.Build(binDir, "github.com/rivetmetal/rivet/cmd/rivet", "rivet")
})

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rivet-ipmi-test")
	binDir = dir
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if !plugintest.FuzzWorker() {
		pluginBin, err = plugintest.Build(dir, "github.com/rivetmetal/rivet/cmd/rivet-driver-ipmi", "rivet-driver-ipmi")
	}
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "build rivet-driver-ipmi:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestConformance runs the SDK's suite at the three levels (and through
// the rivet binary's built-in plugin mode) against go-ipmi's
// in-process BMC, which (unlike ipmi_sim) keeps the persistent and EFI
// bits the suite round-trips and implements the NMI the driver advertises.
func TestConformance(t *testing.T) {
	levels := map[string]func(t *testing.T) plugintest.Target{
		"direct": func(t *testing.T) plugintest.Target {
			d := ipmi.New(nil, ipmi.Options{})
			t.Cleanup(func() { d.Close(context.Background()) })
			return plugintest.Direct(t, d)
		},
		"in-process": func(t *testing.T) plugintest.Target {
			d := ipmi.New(nil, ipmi.Options{})
			t.Cleanup(func() { d.Close(context.Background()) })
			return plugintest.InProcess(t, d)
		},
		"subprocess": func(t *testing.T) plugintest.Target {
			return plugintest.Subprocess(t, host.Command{Path: pluginBin}, ipmi.HardwareType)
		},
		"subprocess via rivet plugin serve": func(t *testing.T) plugintest.Target {
			bin, err := rivetBin()
			if err != nil {
				t.Fatalf("build cmd/rivet: %v", err)
			}
			return plugintest.Subprocess(t, host.BuiltInCommands(bin, "ipmi")["ipmi"], ipmi.HardwareType)
		},
	}
	for name, level := range levels {
		t.Run(name, func(t *testing.T) {
			bmc := ipmi.StartTestBMC(t)
			tgt := level(t)
			if want := []plugins.Capability{plugins.CapabilityNMI, plugins.CapabilityProperties, plugins.CapabilitySensors, plugins.CapabilitySoftPower, plugins.CapabilityValidate}; fmt.Sprint(tgt.Info.Capabilities) != fmt.Sprint(want) {
				t.Errorf("capabilities %v, want %v", tgt.Info.Capabilities, want)
			}
			if len(tgt.Info.Interfaces) != 4 {
				t.Errorf("interfaces %v, want power, management, deploy, console", tgt.Info.Interfaces)
			}
			plugintest.Run(t, tgt, bmc)
		})
	}
}
