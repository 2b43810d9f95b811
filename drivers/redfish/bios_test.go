package redfish_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/test/testenv"
)

func settingNamed(settings []plugins.BIOSSetting, name string) (plugins.BIOSSetting, bool) {
	i := slices.IndexFunc(settings, func(s plugins.BIOSSetting) bool { return s.Name == name })
	if i < 0 {
		return plugins.BIOSSetting{}, false
	}
	return settings[i], true
}

func value(s plugins.BIOSSetting) string {
	if s.Value == nil {
		return "<nil>"
	}
	return *s.Value
}

// TestBIOSAgainstSim: settings come with the registry's facts; applied
// settings go to the @Redfish.Settings object, the node is rebooted and
// they read back, and a node that was off is off again; a value the
// registry forbids is refused before anything is written; factory reset
// restores the defaults.
func TestBIOSAgainstSim(t *testing.T) {
	b := startSim(t, sim.Options{})
	d := newDriver(t, testOptions())
	n := node(b, "node-0")

	settings, err := d.GetBIOSSettings(ctx(t), n)
	must(t, "get BIOS settings", err)
	virt, ok := settingNamed(settings, "ProcVirtualization")
	if !ok || value(virt) != "Enabled" || virt.AttributeType != "Enumeration" ||
		!slices.Equal(virt.AllowableValues, []string{"Enabled", "Disabled"}) || virt.ResetRequired == nil || !*virt.ResetRequired {
		t.Errorf("ProcVirtualization %+v", virt)
	}
	cores, _ := settingNamed(settings, "ProcCoreDisable")
	if value(cores) != "0" || cores.AttributeType != "Integer" || cores.LowerBound == nil || *cores.LowerBound != 0 || cores.UpperBound == nil || *cores.UpperBound != 32 {
		t.Errorf("ProcCoreDisable %+v", cores)
	}
	pxe, _ := settingNamed(settings, "PxeIpv6")
	if value(pxe) != "False" || pxe.AttributeType != "Boolean" {
		t.Errorf("PxeIpv6 %+v (booleans read as Ironic stores them)", pxe)
	}
	serial, _ := settingNamed(settings, "SystemSerial")
	if serial.ReadOnly == nil || !*serial.ReadOnly || serial.MaxLength == nil || *serial.MaxLength != 16 {
		t.Errorf("SystemSerial %+v", serial)
	}

	for _, bad := range [][]plugins.BIOSSettingValue{
		{{Name: "ProcVirtualization", Value: "Maybe"}},
		{{Name: "ProcCoreDisable", Value: "64"}},
		{{Name: "SystemSerial", Value: "X"}},
		{{Name: "NoSuchSetting", Value: "1"}},
	} {
		err := d.ApplyBIOSSettings(ctx(t), n, bad)
		if !errors.Is(err, plugins.ErrNotSupported) || !strings.Contains(err.Error(), bad[0].Name) {
			t.Errorf("apply %v: %v, want ErrNotSupported naming the setting", bad, err)
		}
	}
	if c := b.count("PATCH", "/Bios/Settings"); c != 0 {
		t.Fatalf("%d PATCHes of the settings object for refused values", c)
	}

	must(t, "apply BIOS settings", d.ApplyBIOSSettings(ctx(t), n, []plugins.BIOSSettingValue{
		{Name: "ProcVirtualization", Value: "Disabled"}, {Name: "ProcCoreDisable", Value: "4"}, {Name: "PxeIpv6", Value: "true"}}))
	settings, err = d.GetBIOSSettings(ctx(t), n)
	must(t, "get BIOS settings", err)
	for name, want := range map[string]string{"ProcVirtualization": "Disabled", "ProcCoreDisable": "4", "PxeIpv6": "True"} {
		if s, _ := settingNamed(settings, name); value(s) != want {
			t.Errorf("%s = %s after apply, want %s", name, value(s), want)
		}
	}
	st := b.state(t, "node-0")
	if st.PowerState != sim.PowerOff || st.Boots != 1 {
		t.Errorf("after apply on a node that was off: %s, %d boots; want off again after one boot", st.PowerState, st.Boots)
	}
	// Asking again for what is in force costs no reboot (as Ironic).
	must(t, "apply again", d.ApplyBIOSSettings(ctx(t), n, []plugins.BIOSSettingValue{{Name: "ProcVirtualization", Value: "Disabled"}}))
	if st := b.state(t, "node-0"); st.Boots != 1 {
		t.Errorf("re-applying the settings in force rebooted the node")
	}

	must(t, "factory reset", d.FactoryResetBIOS(ctx(t), n))
	settings, err = d.GetBIOSSettings(ctx(t), n)
	must(t, "get BIOS settings", err)
	if s, _ := settingNamed(settings, "ProcVirtualization"); value(s) != "Enabled" {
		t.Errorf("after factory reset ProcVirtualization = %s", value(s))
	}
}

// TestFirmwareAgainstSim: components are read as Ironic reads them; an
// update goes through SimpleUpdate and its Task, and the new version is
// in force afterwards (a BIOS image after the reboot the driver does); a
// task ending in Exception fails the update with the BMC's message.
func TestFirmwareAgainstSim(t *testing.T) {
	b := startSim(t, sim.Options{Systems: 2, UpdateDuration: 30 * time.Millisecond})
	d := newDriver(t, testOptions())
	n := node(b, "node-1")
	comps, err := d.ListFirmwareComponents(ctx(t), n)
	must(t, "list firmware components", err)
	want := []plugins.FirmwareComponent{{Component: "bios", CurrentVersion: "1.0.0"}, {Component: "bmc", CurrentVersion: "1.0.0"}}
	if !slices.Equal(comps, want) {
		t.Fatalf("components %v, want %v", comps, want)
	}
	for _, bad := range []plugins.FirmwareUpdate{{Component: "disk", URL: "http://x/a-1.bin"}, {Component: "bios", URL: "ftp://x/a-1.bin"}} {
		if err := d.UpdateFirmware(ctx(t), n, []plugins.FirmwareUpdate{bad}); !errors.Is(err, plugins.ErrNotSupported) {
			t.Errorf("update %+v: %v, want ErrNotSupported", bad, err)
		}
	}
	must(t, "update firmware", d.UpdateFirmware(ctx(t), n, []plugins.FirmwareUpdate{
		{Component: "bios", URL: "http://images.example/bios-2.5.1.bin"},
		{Component: "bmc", URL: "https://images.example/bmc-7.0.hpm"}}))
	comps, err = d.ListFirmwareComponents(ctx(t), n)
	must(t, "list firmware components", err)
	want = []plugins.FirmwareComponent{{Component: "bios", CurrentVersion: "2.5.1"}, {Component: "bmc", CurrentVersion: "7.0"}}
	if !slices.Equal(comps, want) {
		t.Errorf("components after the update %v, want %v", comps, want)
	}
	if st := b.state(t, "node-1"); st.PowerState != sim.PowerOff || st.Boots != 1 {
		t.Errorf("after the update of a node that was off: %s, %d boots; want off again after the BIOS reboot", st.PowerState, st.Boots)
	}
	// The other system was not touched: Targets named node-1's items.
	other, err := d.ListFirmwareComponents(ctx(t), node(b, "node-0"))
	must(t, "list node-0", err)
	if other[0].CurrentVersion != "1.0.0" || other[1].CurrentVersion != "1.0.0" {
		t.Errorf("node-0 changed: %v", other)
	}
	err = d.UpdateFirmware(ctx(t), n, []plugins.FirmwareUpdate{{Component: "bios", URL: "http://images.example/bios.bin"}})
	if err == nil || !strings.Contains(err.Error(), "Exception") || !strings.Contains(err.Error(), "carries no version") {
		t.Errorf("a failing update: %v", err)
	}
}

// TestBIOSAndFirmwareAgainstMockups reads BIOS settings and firmware
// components from DMTF mockups, whose shapes nobody here wrote; the
// expectations come from the mockup files themselves. Their Registries
// hold no BIOS attribute registry, so settings come without registry
// facts, as Ironic caches them then.
func TestBIOSAndFirmwareAgainstMockups(t *testing.T) {
	dir := testenv.RequireRedfishMockups(t)
	for _, name := range []string{"public-tower", "public-liquid-cooled-server"} {
		t.Run(name, func(t *testing.T) {
			m := startMockup(t, filepath.Join(dir, name))
			sys := m.systems()[0]
			n := plugins.Node{UUID: "uuid-" + name, HardwareType: redfish.HardwareType, DriverInfo: plugins.DriverInfo{
				redfish.KeyAddress: m.URL, redfish.KeySystemID: sys, redfish.KeyUsername: "admin", redfish.KeyPassword: password}}
			d := newDriver(t, testOptions())

			m.mu.Lock()
			biosPath, _ := lookup(m.res[sys], "Bios", "@odata.id").(string)
			attrs, _ := m.res[strings.TrimRight(biosPath, "/")]["Attributes"].(map[string]any)
			biosVersion, _ := m.res[sys]["BiosVersion"].(string)
			mgr, _ := lookup(map[string]any{"x": lookup(m.res[sys], "Links", "ManagedBy").([]any)[0]}, "x", "@odata.id").(string)
			bmcVersion, _ := m.res[strings.TrimRight(mgr, "/")]["FirmwareVersion"].(string)
			m.mu.Unlock()
			if len(attrs) == 0 || biosVersion == "" || bmcVersion == "" {
				t.Fatalf("mockup lacks what the test reads: %d attributes, BIOS %q, BMC %q", len(attrs), biosVersion, bmcVersion)
			}

			settings, err := d.GetBIOSSettings(ctx(t), n)
			must(t, "get BIOS settings", err)
			if len(settings) != len(attrs) {
				t.Errorf("%d settings, the mockup has %d", len(settings), len(attrs))
			}
			for _, s := range settings {
				raw, _ := json.Marshal(attrs[s.Name])
				var want string
				switch v := attrs[s.Name].(type) {
				case string:
					want = v
				default:
					want = string(raw)
				}
				if value(s) != want || s.AttributeType != "" {
					t.Errorf("%s = %s (type %q), mockup %s", s.Name, value(s), s.AttributeType, want)
				}
			}
			comps, err := d.ListFirmwareComponents(ctx(t), n)
			must(t, "list firmware components", err)
			want := []plugins.FirmwareComponent{{Component: "bios", CurrentVersion: biosVersion}, {Component: "bmc", CurrentVersion: bmcVersion}}
			if len(comps) < 2 || !slices.Equal(comps[:2], want) {
				t.Errorf("components %v, want %v first", comps, want)
			}
			for _, c := range comps[2:] {
				if !strings.HasPrefix(c.Component, redfish.NICPrefix) || c.CurrentVersion == "" {
					t.Errorf("component %+v", c)
				}
			}
			t.Log(fmt.Sprint(comps))
		})
	}
}
