package redfish_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
)

// TestDriverInfo: each bad driver_info is refused before any request with
// an InvalidDriverInfoError naming exactly the bad keys; good variants work.
func TestDriverInfo(t *testing.T) {
	b := startSim(t, sim.Options{Systems: 2})
	one := startSim(t, sim.Options{})
	tests := map[string]struct {
		bmc     *bmcSim
		set     map[string]any // nil value: delete the key
		missing []string
		invalid []string
	}{
		"no address":              {bmc: b, set: map[string]any{redfish.KeyAddress: nil}, missing: []string{redfish.KeyAddress}},
		"ftp address":             {bmc: b, set: map[string]any{redfish.KeyAddress: "ftp://bmc"}, invalid: []string{redfish.KeyAddress}},
		"credentials in URL":      {bmc: b, set: map[string]any{redfish.KeyAddress: "https://u:p@bmc"}, invalid: []string{redfish.KeyAddress}},
		"address with path":       {bmc: b, set: map[string]any{redfish.KeyAddress: "https://bmc/redfish/v1"}, invalid: []string{redfish.KeyAddress}},
		"numeric username":        {bmc: b, set: map[string]any{redfish.KeyUsername: 7.0}, invalid: []string{redfish.KeyUsername}},
		"bad auth type":           {bmc: b, set: map[string]any{redfish.KeyAuthType: "kerberos"}, invalid: []string{redfish.KeyAuthType}},
		"bad verify_ca":           {bmc: b, set: map[string]any{redfish.KeyVerifyCA: "/no/such/bundle.pem"}, invalid: []string{redfish.KeyVerifyCA}},
		"bad media location":      {bmc: b, set: map[string]any{redfish.KeyVirtualMediaLocation: "chassis"}, invalid: []string{redfish.KeyVirtualMediaLocation}},
		"bad power timeout":       {bmc: b, set: map[string]any{redfish.KeyPowerStateChangeTimeout: -1.0}, invalid: []string{redfish.KeyPowerStateChangeTimeout}},
		"two problems":            {bmc: b, set: map[string]any{redfish.KeyAddress: nil, redfish.KeyAuthType: "x"}, missing: []string{redfish.KeyAddress}, invalid: []string{redfish.KeyAuthType}},
		"no system id, 2 systems": {bmc: b, set: map[string]any{redfish.KeySystemID: nil}, missing: []string{redfish.KeySystemID}},
		"no system id, 1 system":  {bmc: one, set: map[string]any{redfish.KeySystemID: nil}},
		"bare system id":          {bmc: b, set: map[string]any{redfish.KeySystemID: "node-1"}},
		"verify_ca string false":  {bmc: b, set: map[string]any{redfish.KeyVerifyCA: "False"}},
		"basic auth":              {bmc: b, set: map[string]any{redfish.KeyAuthType: redfish.AuthBasic}},
		"power timeout as string": {bmc: b, set: map[string]any{redfish.KeyPowerStateChangeTimeout: "30"}},
	}
	d := newDriver(t, testOptions())
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n := node(tc.bmc, "node-0")
			for k, v := range tc.set {
				if v == nil {
					delete(n.DriverInfo, k)
				} else {
					n.DriverInfo[k] = v
				}
			}
			_, err := d.GetPowerState(ctx(t), n)
			noSecret(t, err)
			if tc.missing == nil && tc.invalid == nil {
				must(t, "get power state", err)
				return
			}
			var e *plugins.InvalidDriverInfoError
			if !errors.As(err, &e) || plugins.IsRetryable(err) {
				t.Fatalf("got %v, want a non-retryable InvalidDriverInfoError", err)
			}
			slices.Sort(e.Invalid)
			if fmt.Sprint(e.Missing) != fmt.Sprint(tc.missing) || fmt.Sprint(e.Invalid) != fmt.Sprint(tc.invalid) {
				t.Errorf("missing %v invalid %v, want %v %v", e.Missing, e.Invalid, tc.missing, tc.invalid)
			}
		})
	}
}
