package redfish_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
)

// TestValidate: Validate reaches the BMC for power and management and says
// which problem it is; every driver_info key is type-checked; deploy checks
// boot_iso. On 9b9faca the driver had no Validate and the conductor passed
// every one of these nodes.
func TestValidate(t *testing.T) {
	one := startSim(t, sim.Options{Systems: 1})
	two := startSim(t, sim.Options{Systems: 2})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	d := newDriver(t, testOptions())
	with := func(b *bmcSim, id string, edit func(di plugins.DriverInfo)) plugins.Node {
		n := node(b, id)
		if edit != nil {
			edit(n.DriverInfo)
		}
		return n
	}
	for name, tc := range map[string]struct {
		node  plugins.Node
		iface plugins.Interface
		want  error // nil: valid
		keys  string
	}{
		"good":                  {node: with(one, "node-0", nil), iface: plugins.InterfacePower},
		"good management":       {node: with(one, "node-0", nil), iface: plugins.InterfaceManagement},
		"sole system, no id":    {node: with(one, "node-0", func(di plugins.DriverInfo) { delete(di, redfish.KeySystemID) }), iface: plugins.InterfacePower},
		"wrong password":        {node: with(one, "node-0", func(di plugins.DriverInfo) { di[redfish.KeyPassword] = "not-the-password" }), iface: plugins.InterfacePower, want: plugins.ErrCredentialsRefused},
		"no credentials":        {node: with(one, "node-0", func(di plugins.DriverInfo) { delete(di, redfish.KeyUsername); delete(di, redfish.KeyPassword) }), iface: plugins.InterfaceManagement, want: plugins.ErrCredentialsRefused},
		"wrong system id":       {node: with(one, "node-7", nil), iface: plugins.InterfacePower, want: plugins.ErrWrongSystemID},
		"two systems, no id":    {node: with(two, "node-0", func(di plugins.DriverInfo) { delete(di, redfish.KeySystemID) }), iface: plugins.InterfacePower, want: plugins.ErrWrongSystemID},
		"unreachable":           {node: with(one, "node-0", func(di plugins.DriverInfo) { di[redfish.KeyAddress] = dead }), iface: plugins.InterfacePower, want: plugins.ErrBMCUnreachable},
		"bad auth type":         {node: with(one, "node-0", func(di plugins.DriverInfo) { di[redfish.KeyAuthType] = "kerberos" }), iface: plugins.InterfacePower, want: plugins.ErrInvalidDriverInfo, keys: redfish.KeyAuthType},
		"bad verify_ca":         {node: with(one, "node-0", func(di plugins.DriverInfo) { di[redfish.KeyVerifyCA] = "/no/such/bundle.pem" }), iface: plugins.InterfaceDeploy, want: plugins.ErrInvalidDriverInfo, keys: redfish.KeyVerifyCA},
		"bad timeout":           {node: with(one, "node-0", func(di plugins.DriverInfo) { di[redfish.KeyPowerStateChangeTimeout] = "soon" }), iface: plugins.InterfaceInspect, want: plugins.ErrInvalidDriverInfo, keys: redfish.KeyPowerStateChangeTimeout},
		"address with userinfo": {node: with(one, "node-0", func(di plugins.DriverInfo) { di[redfish.KeyAddress] = "https://u:p@bmc.example" }), iface: plugins.InterfacePower, want: plugins.ErrInvalidDriverInfo, keys: redfish.KeyAddress},
		"address not a string":  {node: with(one, "node-0", func(di plugins.DriverInfo) { di[redfish.KeyAddress] = 42.0 }), iface: plugins.InterfacePower, want: plugins.ErrInvalidDriverInfo, keys: redfish.KeyAddress},
	} {
		t.Run(name, func(t *testing.T) {
			err := d.Validate(ctx(t), tc.node, tc.iface)
			noSecret(t, err)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Validate: %v, want %v", err, tc.want)
			}
			if tc.keys != "" && !strings.Contains(err.Error(), tc.keys) {
				t.Errorf("Validate: %v, want it to name %s", err, tc.keys)
			}
			if strings.Contains(err.Error(), "not-the-password") {
				t.Errorf("Validate leaks the wrong password: %v", err)
			}
		})
	}
}

// TestValidateDeployImage: deploy validation refuses a boot_iso that is not
// an http(s) URL the BMC can fetch, and accepts one that is.
func TestValidateDeployImage(t *testing.T) {
	b := startSim(t, sim.Options{Systems: 1})
	d := newDriver(t, testOptions())
	for iso, valid := range map[string]bool{
		"http://images.example/x.iso": true, "https://images.example/x.iso": true,
		"not a url": false, "images.example/x.iso": false, "ftp://images.example/x.iso": false, "": false,
	} {
		n := node(b, "node-0")
		n.InstanceInfo = map[string]any{redfish.KeyBootISO: iso}
		err := d.Validate(ctx(t), n, plugins.InterfaceDeploy)
		if (err == nil) != valid {
			t.Errorf("boot_iso %q: Validate = %v, want valid %v", iso, err, valid)
		}
	}
}

// TestProperties: every key parseInfo reads is declared, the address as
// required, and no description names an option Rivet does not have.
func TestProperties(t *testing.T) {
	d := newDriver(t, testOptions())
	got := map[string]plugins.Property{}
	for _, p := range d.Properties() {
		got[p.Name] = p
		if strings.Contains(p.Description, "ironic config") {
			t.Errorf("%s: description names Ironic's configuration: %q", p.Name, p.Description)
		}
	}
	for _, k := range []string{redfish.KeyAddress, redfish.KeySystemID, redfish.KeyUsername, redfish.KeyPassword,
		redfish.KeyVerifyCA, redfish.KeyAuthType, redfish.KeyVirtualMediaLocation, redfish.KeyPowerStateChangeTimeout} {
		if _, ok := got[k]; !ok {
			t.Errorf("property %s not declared", k)
		}
	}
	if !got[redfish.KeyAddress].Required || got[redfish.KeySystemID].Required {
		t.Errorf("required: address %v, system id %v; want true, false", got[redfish.KeyAddress].Required, got[redfish.KeySystemID].Required)
	}
}

// TestValidateAgreesWithCalls: validate judges redfish_address as every
// call does (one parsing function), also for a schemeless address, which
// Ironic reads as https.
func TestValidateAgreesWithCalls(t *testing.T) {
	b := startSim(t, sim.Options{Systems: 1})
	d := newDriver(t, testOptions())
	for _, addr := range []string{strings.TrimPrefix(b.URL, "http://"), "bmc.example.test", "https://bmc.example.test:8443", "ftp://bmc"} {
		n := node(b, "node-0")
		n.DriverInfo[redfish.KeyAddress] = addr
		errV := d.Validate(ctx(t), n, plugins.InterfacePower)
		_, errP := d.GetPowerState(ctx(t), n)
		if errors.Is(errV, plugins.ErrInvalidDriverInfo) != errors.Is(errP, plugins.ErrInvalidDriverInfo) {
			t.Errorf("address %q: validate says %v, get power state says %v", addr, errV, errP)
		}
	}
}
