package redfish_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/test/testenv"
)

// TestGraphicalConsole: redfish-graphical answers the BMC's address as a
// vnc console_info for a DMTF mockup whose manager has an enabled KVM-IP
// GraphicalConsole, without credentials in the URL; against the simulator,
// which has none, it is ErrNotSupported naming what is missing; and when
// the service is disabled too. StopConsole has nothing to stop.
func TestGraphicalConsole(t *testing.T) {
	dir := testenv.RequireRedfishMockups(t)
	m := startMockup(t, filepath.Join(dir, "public-rackmount1"))
	n := plugins.Node{UUID: "uuid-graphical", HardwareType: redfish.HardwareType, DriverInfo: plugins.DriverInfo{
		redfish.KeyAddress: m.URL, redfish.KeySystemID: m.systems()[0],
		redfish.KeyUsername: "admin", redfish.KeyPassword: password,
	}}
	d := newDriver(t, testOptions())
	info, err := d.StartConsole(ctx(t), n, plugins.ConsoleEndpoint{Address: "127.0.0.1", Port: 10000})
	if err != nil {
		t.Fatal(err)
	}
	if info.Type != "vnc" || info.URL != m.URL+"/" || strings.Contains(info.URL, password) || strings.Contains(info.URL, "admin") {
		t.Fatalf("console info %+v", info)
	}
	if err := d.StopConsole(ctx(t), n); err != nil {
		t.Fatal(err)
	}

	b := startSim(t, sim.Options{})
	_, err = d.StartConsole(ctx(t), node(b, "node-0"), plugins.ConsoleEndpoint{})
	if !errors.Is(err, plugins.ErrNotSupported) || !strings.Contains(err.Error(), "graphical console") {
		t.Fatalf("simulator without a graphical console: %v", err)
	}
	noSecret(t, err)

	off := startSim(t, sim.Options{}, func(b *bmcSim) {
		b.rewrite = func(path string, body map[string]any) {
			if strings.Contains(path, "/Managers/") || strings.Contains(path, "/Systems/") {
				body["GraphicalConsole"] = map[string]any{"ServiceEnabled": false, "ConnectTypesSupported": []any{"KVMIP"}}
			}
		}
	})
	if _, err := d.StartConsole(ctx(t), node(off, "node-0"), plugins.ConsoleEndpoint{}); !errors.Is(err, plugins.ErrNotSupported) {
		t.Fatalf("disabled graphical console: %v", err)
	}
	on := startSim(t, sim.Options{}, func(b *bmcSim) {
		b.rewrite = func(path string, body map[string]any) {
			if strings.Contains(path, "/Systems/") {
				body["GraphicalConsole"] = map[string]any{"ServiceEnabled": true, "ConnectTypesSupported": []any{"KVMIP"}}
			}
		}
	})
	if info, err := d.StartConsole(ctx(t), node(on, "node-0"), plugins.ConsoleEndpoint{}); err != nil || info.URL != on.URL+"/" {
		t.Fatalf("system graphical console: %+v %v", info, err)
	}
}
