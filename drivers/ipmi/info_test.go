package ipmi

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bougou/go-ipmi/pkg/bmc"
	"github.com/bougou/go-ipmi/pkg/types"
	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/plugins"
)

func TestParseInfo(t *testing.T) {
	base := func(extra plugins.DriverInfo) plugins.DriverInfo {
		info := plugins.DriverInfo{KeyAddress: "10.0.0.5", KeyUsername: "root", KeyPassword: "pw"}
		for k, v := range extra {
			info[k] = v
		}
		return info
	}
	def := DefaultOptions()
	tests := map[string]struct {
		info    plugins.DriverInfo
		want    params
		missing []string
		invalid []string
	}{
		"defaults": {info: base(nil), want: params{host: "10.0.0.5", user: "root", password: "pw", port: 623, suite: 3,
			retries: def.Retries, timeout: def.CommandTimeout, interval: def.MinCommandInterval, powerTimeout: def.PowerStateChangeTimeout, priv: types.PrivilegeLevelAdministrator}},
		"overrides as numbers and strings": {
			info: base(plugins.DriverInfo{KeyPort: float64(6230), KeyCipherSuite: "17", KeyTimeout: 0.25, KeyRetries: "0",
				KeyMinCommandInterval: "0.1", KeyPowerStateChangeTimeout: float64(5)}),
			want: params{host: "10.0.0.5", user: "root", password: "pw", port: 6230, suite: 17,
				retries: 0, timeout: 250 * time.Millisecond, interval: 100 * time.Millisecond, powerTimeout: 5 * time.Second, priv: types.PrivilegeLevelAdministrator}},
		"no credentials (anonymous BMC)": {info: plugins.DriverInfo{KeyAddress: "bmc.example"},
			want: params{host: "bmc.example", port: 623, suite: 3, retries: def.Retries, timeout: def.CommandTimeout,
				interval: def.MinCommandInterval, powerTimeout: def.PowerStateChangeTimeout, priv: types.PrivilegeLevelAdministrator}},
		"missing address": {info: plugins.DriverInfo{KeyUsername: "root"}, missing: []string{KeyAddress}},
		"bad values": {info: base(plugins.DriverInfo{KeyPort: float64(70000), KeyCipherSuite: float64(2),
			KeyRetries: 1.5, KeyTimeout: "soon"}), invalid: []string{KeyPort, KeyRetries, KeyCipherSuite, KeyTimeout}},
		"address with a path":     {info: base(plugins.DriverInfo{KeyAddress: "http://bmc/"}), invalid: []string{KeyAddress}},
		"password not a string":   {info: base(plugins.DriverInfo{KeyPassword: float64(1234)}), invalid: []string{KeyPassword}},
		"user name over 16 bytes": {info: base(plugins.DriverInfo{KeyUsername: "a-very-long-user-name"}), invalid: []string{KeyUsername}},
		"priv level operator, any case": {info: base(plugins.DriverInfo{KeyPrivLevel: " operator"}),
			want: params{host: "10.0.0.5", user: "root", password: "pw", port: 623, suite: 3, retries: def.Retries,
				timeout: def.CommandTimeout, interval: def.MinCommandInterval, powerTimeout: def.PowerStateChangeTimeout,
				priv: types.PrivilegeLevelOperator}},
		"priv level unknown":       {info: base(plugins.DriverInfo{KeyPrivLevel: "ROOT"}), invalid: []string{KeyPrivLevel}},
		"priv level not a string":  {info: base(plugins.DriverInfo{KeyPrivLevel: float64(4)}), invalid: []string{KeyPrivLevel}},
		"cipher suite 1 is unsafe": {info: base(plugins.DriverInfo{KeyCipherSuite: float64(1)}), invalid: []string{KeyCipherSuite}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseInfo(tc.info, DefaultOptions())
			if tc.missing == nil && tc.invalid == nil {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(params{})); diff != "" {
					t.Errorf("params (-want +got):\n%s", diff)
				}
				return
			}
			var ie *plugins.InvalidDriverInfoError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v, want *InvalidDriverInfoError", err)
			}
			if diff := cmp.Diff(tc.missing, ie.Missing); diff != "" {
				t.Errorf("missing keys (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.invalid, ie.Invalid); diff != "" {
				t.Errorf("invalid keys (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParseInfo: driver_info comes from the API; no value may panic the
// parser or come back inside its error.
func FuzzParseInfo(f *testing.F) {
	f.Add("10.0.0.1", "623", "3", "1.5", "secret-pw")
	f.Add("", "x", "-1", "NaN", "")
	f.Fuzz(func(t *testing.T, addr, port, suite, timeout, pw string) {
		info := plugins.DriverInfo{KeyAddress: addr, KeyPort: port, KeyCipherSuite: suite, KeyTimeout: timeout, KeyPassword: pw}
		if _, err := parseInfo(info, DefaultOptions()); err != nil && len(pw) > 3 && strings.Contains(err.Error(), pw) {
			t.Errorf("error %q carries the password", err)
		}
	})
}

// TestPrivLevelHonoured: ipmi_priv_level is the level the session asks
// for. A BMC account capped at OPERATOR cannot open the default
// ADMINISTRATOR session, and works with ipmi_priv_level OPERATOR.
func TestPrivLevelHonoured(t *testing.T) {
	b := startBMC(t, bmcConfig{maxPriv: bmc.PrivilegeLevelOperator})
	d := newDriver(t, Options{})
	if _, err := d.GetPowerState(testCtx(t), b.node(nil)); err == nil {
		t.Error("an ADMINISTRATOR session opened for an account capped at OPERATOR")
	}
	n := b.node(plugins.DriverInfo{KeyPrivLevel: "OPERATOR"})
	if err := d.SetPowerState(testCtx(t), n, plugins.PowerOn); err != nil {
		t.Fatalf("power on at OPERATOR: %v", err)
	}
	if got, err := d.GetPowerState(testCtx(t), n); err != nil || got != plugins.PowerOn {
		t.Errorf("power state at OPERATOR: %q, %v", got, err)
	}
}
