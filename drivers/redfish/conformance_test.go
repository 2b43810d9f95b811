package redfish_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

var pluginBin string

// TestMain builds cmd/rivet-driver-redfish once for the subprocess level.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "redfish-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if !plugintest.FuzzWorker() {
		pluginBin, err = plugintest.Build(dir, "github.com/rivetmetal/rivet/cmd/rivet-driver-redfish", "rivet-driver-redfish")
	}
	code := 1
	if err == nil {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestConformance runs the SDK's suite against the simulator at the three
// levels: the Go value, behind in-process gRPC, and the real plugin binary.
// Each level gets its own simulator, serving media on the System too, and
// the suite's deploy must really have booted the ISO.
func TestConformance(t *testing.T) {
	levels := map[string]func(t *testing.T) plugintest.Target{
		"direct":     func(t *testing.T) plugintest.Target { return plugintest.Direct(t, newDriver(t, testOptions())) },
		"in-process": func(t *testing.T) plugintest.Target { return plugintest.InProcess(t, newDriver(t, testOptions())) },
		"subprocess": func(t *testing.T) plugintest.Target {
			return plugintest.Subprocess(t, host.Command{Path: pluginBin}, "redfish")
		},
	}
	for name, level := range levels {
		t.Run(name, func(t *testing.T) {
			b := startSim(t, sim.Options{SystemVirtualMedia: true})
			plugintest.Run(t, level(t), node(b, "node-0"))
			if st := b.state(t, "node-0"); st.LastBootImage != iso {
				t.Errorf("the suite's deploy booted %q, want %q", st.LastBootImage, iso)
			}
		})
	}
}
