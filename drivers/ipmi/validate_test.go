package ipmi

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/plugins"
)

// TestValidate: every driver_info key is type-checked, and power and
// management validation reaches the BMC with the node's credentials and
// says which problem it is. On 9b9faca the driver had no Validate and the
// conductor passed every one of these nodes.
func TestValidate(t *testing.T) {
	b := startBMC(t, bmcConfig{})
	d := newDriver(t, Options{})
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	silent := pc.LocalAddr().(*net.UDPAddr).Port // bound, never answers
	t.Cleanup(func() { pc.Close() })
	for name, tc := range map[string]struct {
		extra plugins.DriverInfo
		drop  []string
		iface plugins.Interface
		want  error // nil: valid
		key   string
	}{
		"good":                  {iface: plugins.InterfacePower},
		"good management":       {iface: plugins.InterfaceManagement},
		"good priv level":       {extra: plugins.DriverInfo{KeyPrivLevel: "OPERATOR"}, iface: plugins.InterfacePower},
		"wrong password":        {extra: plugins.DriverInfo{KeyPassword: "not-the-password"}, iface: plugins.InterfacePower, want: plugins.ErrCredentialsRefused},
		"no credentials":        {drop: []string{KeyUsername, KeyPassword}, iface: plugins.InterfaceManagement, want: plugins.ErrCredentialsRefused},
		"unreachable":           {extra: plugins.DriverInfo{KeyPort: float64(silent)}, iface: plugins.InterfacePower, want: plugins.ErrBMCUnreachable},
		"port not a number":     {extra: plugins.DriverInfo{KeyPort: "notaport"}, iface: plugins.InterfacePower, want: plugins.ErrInvalidDriverInfo, key: KeyPort},
		"port out of range":     {extra: plugins.DriverInfo{KeyPort: 70000.0}, iface: plugins.InterfaceDeploy, want: plugins.ErrInvalidDriverInfo, key: KeyPort},
		"cipher suite 0":        {extra: plugins.DriverInfo{KeyCipherSuite: 0.0}, iface: plugins.InterfacePower, want: plugins.ErrInvalidDriverInfo, key: KeyCipherSuite},
		"cipher suite 18":       {extra: plugins.DriverInfo{KeyCipherSuite: "18"}, iface: plugins.InterfacePower, want: plugins.ErrInvalidDriverInfo, key: KeyCipherSuite},
		"priv level":            {extra: plugins.DriverInfo{KeyPrivLevel: "ROOT"}, iface: plugins.InterfacePower, want: plugins.ErrInvalidDriverInfo, key: KeyPrivLevel},
		"bridging":              {extra: plugins.DriverInfo{KeyBridging: "dual"}, iface: plugins.InterfaceInspect, want: plugins.ErrInvalidDriverInfo, key: KeyBridging},
		"protocol 1.5":          {extra: plugins.DriverInfo{KeyProtocolVersion: "1.5"}, iface: plugins.InterfacePower, want: plugins.ErrInvalidDriverInfo, key: KeyProtocolVersion},
		"username not string":   {extra: plugins.DriverInfo{KeyUsername: 7.0}, iface: plugins.InterfacePower, want: plugins.ErrInvalidDriverInfo, key: KeyUsername},
		"deploy kernel not url": {extra: plugins.DriverInfo{KeyDeployKernel: "vmlinuz"}, iface: plugins.InterfaceDeploy, want: plugins.ErrInvalidDriverInfo, key: KeyDeployKernel},
		"no address":            {drop: []string{KeyAddress}, iface: plugins.InterfacePower, want: plugins.ErrInvalidDriverInfo, key: KeyAddress},
	} {
		t.Run(name, func(t *testing.T) {
			n := b.node(tc.extra)
			for _, k := range tc.drop {
				delete(n.DriverInfo, k)
			}
			err := d.Validate(testCtx(t), n, tc.iface)
			if err != nil && (strings.Contains(err.Error(), testPassword) || strings.Contains(err.Error(), "not-the-password")) {
				t.Errorf("Validate leaks a password: %v", err)
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Validate: %v, want %v", err, tc.want)
			}
			if got := plugins.ClassifyValidation(err); tc.want == plugins.ErrCredentialsRefused && got != plugins.ProblemCredentialsRefused {
				t.Errorf("classified %q, want %q", got, plugins.ProblemCredentialsRefused)
			}
			if tc.key != "" && !strings.Contains(err.Error(), tc.key) {
				t.Errorf("Validate: %v, want it to name %s", err, tc.key)
			}
		})
	}
}

// TestValidateDeployImages: the ramdisk deploy's image references must be
// URLs or image ids.
func TestValidateDeployImages(t *testing.T) {
	b := startBMC(t, bmcConfig{})
	d := newDriver(t, Options{})
	for name, tc := range map[string]struct {
		ii    map[string]any
		valid bool
	}{
		"kernel and ramdisk URLs": {map[string]any{InstanceKernel: "http://i/k", InstanceRamdisk: "https://i/r"}, true},
		"boot_iso file URL":       {map[string]any{InstanceBootISO: "file:///srv/boot.iso"}, true},
		"boot_iso glance id":      {map[string]any{InstanceBootISO: "7b0b8a8e-3c4f-4f0e-8d8e-0a1b2c3d4e5f"}, true},
		"boot_iso not a URL":      {map[string]any{InstanceBootISO: "boot.iso"}, false},
		"kernel not a URL":        {map[string]any{InstanceKernel: "vmlinuz", InstanceRamdisk: "https://i/r"}, false},
		"nothing":                 {map[string]any{}, false},
	} {
		t.Run(name, func(t *testing.T) {
			n := b.node(nil)
			n.InstanceInfo = tc.ii
			err := d.Validate(testCtx(t), n, plugins.InterfaceDeploy)
			if (err == nil) != tc.valid {
				t.Fatalf("Validate = %v, want valid %v", err, tc.valid)
			}
		})
	}
}
