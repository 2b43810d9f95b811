package redfish

import (
	"slices"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/plugins"
)

// FuzzDriverInfo feeds arbitrary driver_info values to the parser: it must
// not panic, must name only known keys, and must never put the password in
// its error.
func FuzzDriverInfo(f *testing.F) {
	f.Add("https://bmc.example:8443", "/redfish/v1/Systems/1", "auto", "true", "30", "manager")
	f.Add("http://u:p@bmc", "node-0", "kerberos", "/etc/ssl/x.pem", "-1", "x")
	f.Add("", "", "", "", "", "")
	const secret = "fuzz-secret-pw"
	known := []string{KeyAddress, KeySystemID, KeyUsername, KeyPassword, KeyVerifyCA, KeyAuthType,
		KeyVirtualMediaLocation, KeyPowerStateChangeTimeout}
	f.Fuzz(func(t *testing.T, addr, sys, auth, verify, timeout, loc string) {
		di := plugins.DriverInfo{
			KeyAddress: addr, KeySystemID: sys, KeyUsername: "admin", KeyPassword: secret,
			KeyAuthType: auth, KeyVerifyCA: verify, KeyPowerStateChangeTimeout: timeout,
			KeyVirtualMediaLocation: loc,
		}
		ni, err := parseInfo(di, DefaultOptions())
		if err == nil {
			if ni.address == "" || ni.powerTimeout <= 0 {
				t.Fatalf("accepted %v as %+v", di, ni)
			}
			return
		}
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("error leaks the password: %v", err)
		}
		for _, part := range strings.FieldsFunc(strings.SplitN(err.Error(), ": ", 2)[1], func(r rune) bool {
			return r == ',' || r == ';' || r == ' '
		}) {
			if part != "missing" && part != "invalid" && !slices.Contains(known, part) {
				t.Fatalf("error names %q, not a driver_info key: %v", part, err)
			}
		}
	})
}
