package redfish_test

import (
	"encoding/pem"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
)

// TestVerifyCA: an https BMC with a self-signed certificate is refused by
// default (not retryable, not "unreachable"), and accepted with
// redfish_verify_ca false or with its CA bundle.
func TestVerifyCA(t *testing.T) {
	s, err := sim.New(sim.Options{Password: password})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(s.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = s.Close() })
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(bundle, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		verify any // nil: unset (verify_ca_default, true)
		ok     bool
	}{
		"default verifies":  {nil, false},
		"true verifies":     {true, false},
		"false skips":       {false, true},
		"string no skips":   {"no", true},
		"CA bundle trusted": {bundle, true},
	}
	d := newDriver(t, testOptions())
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n := node(&bmcSim{URL: srv.URL}, "node-0")
			if tc.verify != nil {
				n.DriverInfo[redfish.KeyVerifyCA] = tc.verify
			}
			_, err := d.GetPowerState(ctx(t), n)
			noSecret(t, err)
			if tc.ok {
				must(t, "get power state", err)
				return
			}
			if err == nil || plugins.IsRetryable(err) || errors.Is(err, plugins.ErrBMCUnreachable) {
				t.Errorf("got %v (retryable %v), want a certificate refusal", err, plugins.IsRetryable(err))
			}
		})
	}
}
