package redfish_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// TestErrorsCrossTheWire: each failure reaches the host, through the gRPC
// boundary, with its kind and retry-ability and naming the BMC.
func TestErrorsCrossTheWire(t *testing.T) {
	b := startSim(t, sim.Options{Systems: 3, Password: password})
	if err := b.SetFault("node-1", sim.Fault{Hang: true}); err != nil {
		t.Fatal(err)
	}
	if err := b.SetFault("node-2", sim.Fault{Status500: true}); err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	opts.ConnectionTimeout = 300 * time.Millisecond
	tgt := plugintest.InProcess(t, newDriver(t, opts))
	getter := tgt.Driver.(plugins.PowerStateGetter)
	tests := map[string]struct {
		node      plugins.Node
		is        error
		retryable bool
		mentions  string
	}{
		"missing address": {plugins.Node{UUID: "n1", DriverInfo: plugins.DriverInfo{}}, plugins.ErrInvalidDriverInfo, false, ""},
		"wrong password":  {node(b, "node-0", redfish.KeyPassword, "nope-"+password), plugins.ErrInvalidDriverInfo, false, ""},
		"hung BMC":        {node(b, "node-1"), plugins.ErrBMCUnreachable, true, b.URL},
		"500s":            {node(b, "node-2"), nil, false, "HTTP 500"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := getter.GetPowerState(ctx(t), tc.node)
			noSecret(t, err)
			if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) || plugins.IsRetryable(err) != tc.retryable {
				t.Fatalf("error %v (retryable %v), want %v (retryable %v)", err, plugins.IsRetryable(err), tc.is, tc.retryable)
			}
			if !strings.Contains(err.Error(), tc.mentions) {
				t.Errorf("%q does not mention %q", err, tc.mentions)
			}
		})
	}
}
