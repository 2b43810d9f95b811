package redfish_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/test/testenv"
)

// TestManagement2AgainstSim: management interface version 2 against
// rivet-sim, checked on the simulator's own state: the boot mode set is
// the mode the next boot uses, secure boot is SecureBootEnable and is in
// force (SecureBootCurrentBoot) only after a UEFI boot, the system and
// chassis LEDs change as set, and virtual media attach, list and detach
// per device type.
func TestManagement2AgainstSim(t *testing.T) {
	b := startSim(t, sim.Options{Systems: 1})
	id := sim.SystemID(0)
	n := node(b, id)
	d := newDriver(t, testOptions())

	mode, err := d.GetBootMode(ctx(t), n)
	must(t, "get boot mode", err)
	if want := map[string]plugins.BootMode{"UEFI": plugins.BootModeUEFI, "Legacy": plugins.BootModeBIOS}[b.state(t, id).Boot.Mode]; mode != want {
		t.Fatalf("boot mode %q, sim says %q", mode, b.state(t, id).Boot.Mode)
	}
	must(t, "set boot mode bios", d.SetBootMode(ctx(t), n, plugins.BootModeBIOS))
	if st := b.state(t, id); st.Boot.Mode != "Legacy" {
		t.Fatalf("sim boot mode %q after bios", st.Boot.Mode)
	}
	if mode, err = d.GetBootMode(ctx(t), n); err != nil || mode != plugins.BootModeBIOS {
		t.Fatalf("get boot mode after bios: %q, %v", mode, err)
	}
	// The boot device override keeps the mode; the next boot uses it.
	must(t, "set boot device", d.SetBootDevice(ctx(t), n, plugins.BootDeviceSetting{Device: plugins.BootPXE}))
	must(t, "secure boot on", d.SetSecureBoot(ctx(t), n, true))
	must(t, "power on", d.SetPowerState(ctx(t), n, plugins.PowerOn))
	if st := b.state(t, id); st.LastBootMode != "Legacy" || st.LastBootSource != "Pxe" || !st.SecureBootEnable || st.SecureBootCurrentBoot {
		t.Fatalf("after a legacy boot: %+v", st)
	}
	on, err := d.GetSecureBoot(ctx(t), n)
	if err != nil || !on {
		t.Fatalf("get secure boot: %v, %v", on, err)
	}
	must(t, "set boot mode uefi", d.SetBootMode(ctx(t), n, plugins.BootModeUEFI))
	must(t, "reboot", d.Reboot(ctx(t), n))
	if st := b.state(t, id); st.LastBootMode != "UEFI" || !st.SecureBootCurrentBoot {
		t.Fatalf("after a UEFI boot with secure boot: %+v", st)
	}
	must(t, "secure boot off", d.SetSecureBoot(ctx(t), n, false))
	if on, _ := d.GetSecureBoot(ctx(t), n); on || b.state(t, id).SecureBootEnable {
		t.Fatal("secure boot still enabled")
	}

	inds, err := d.SupportedIndicators(ctx(t), n)
	must(t, "list indicators", err)
	if len(inds) != 2 || inds[0].Component != plugins.ComponentSystem || inds[0].Name != id ||
		inds[1].Component != plugins.ComponentChassis || !slices.Contains(inds[1].States, plugins.IndicatorBlinking) {
		t.Fatalf("indicators: %+v", inds)
	}
	must(t, "system blinking", d.SetIndicatorState(ctx(t), n, plugins.ComponentSystem, id, plugins.IndicatorBlinking))
	must(t, "chassis on", d.SetIndicatorState(ctx(t), n, plugins.ComponentChassis, inds[1].Name, plugins.IndicatorOn))
	if st := b.state(t, id); st.IndicatorLED != "Blinking" || st.ChassisIndicatorLED != "Lit" {
		t.Fatalf("LEDs: system %s, chassis %s", st.IndicatorLED, st.ChassisIndicatorLED)
	}
	if st, err := d.GetIndicatorState(ctx(t), n, plugins.ComponentSystem, id); err != nil || st != plugins.IndicatorBlinking {
		t.Fatalf("system LED %q, %v", st, err)
	}
	must(t, "chassis off", d.SetIndicatorState(ctx(t), n, plugins.ComponentChassis, inds[1].Name, plugins.IndicatorOff))
	if st, err := d.GetIndicatorState(ctx(t), n, plugins.ComponentChassis, inds[1].Name); err != nil || st != plugins.IndicatorOff {
		t.Fatalf("chassis LED %q, %v", st, err)
	}
	if _, err := d.GetIndicatorState(ctx(t), n, plugins.ComponentDrive, "x"); !errors.Is(err, plugins.ErrNotSupported) {
		t.Fatalf("unknown indicator: %v", err)
	}

	const img = "http://images.example/boot.iso"
	must(t, "attach cdrom", d.AttachVirtualMedia(ctx(t), n, plugins.VirtualMediaCDROM, img))
	must(t, "attach floppy", d.AttachVirtualMedia(ctx(t), n, plugins.VirtualMediaFloppy, "http://u:secret@images.example/f.img"))
	media, err := d.GetVirtualMedia(ctx(t), n)
	must(t, "get virtual media", err)
	if len(media) != 2 || media[0].Device != plugins.VirtualMediaCDROM || !media[0].Inserted || media[0].Image != img ||
		media[1].Device != plugins.VirtualMediaFloppy || !media[1].Inserted || media[1].Image == "" || slices.Contains([]string{media[1].Image}, "http://u:secret@images.example/f.img") {
		t.Fatalf("virtual media: %+v", media)
	}
	must(t, "detach cdrom", d.DetachVirtualMedia(ctx(t), n, []plugins.VirtualMediaDevice{plugins.VirtualMediaCDROM}))
	if st := b.state(t, id); st.Media[0].Inserted || !st.Media[1].Inserted {
		t.Fatalf("after detaching the CD: %+v", st.Media)
	}
	must(t, "detach all", d.DetachVirtualMedia(ctx(t), n, nil))
	if st := b.state(t, id); st.Media[1].Inserted {
		t.Fatalf("after detaching all: %+v", st.Media)
	}
}

// TestManagement2Mockups reads the boot mode, secure boot and indicators
// of each DMTF mockup's first system and compares them with the mockup's
// own resources.
func TestManagement2Mockups(t *testing.T) {
	dir := testenv.RequireRedfishMockups(t)
	for _, name := range testenv.RedfishMockups {
		t.Run(name, func(t *testing.T) {
			m := startMockup(t, filepath.Join(dir, name))
			sysPath := m.systems()[0]
			sys := m.res[sysPath]
			n := plugins.Node{UUID: "uuid-" + name, HardwareType: redfish.HardwareType, DriverInfo: plugins.DriverInfo{
				redfish.KeyAddress: m.URL, redfish.KeySystemID: sysPath, redfish.KeyUsername: "admin", redfish.KeyPassword: password}}
			d := newDriver(t, testOptions())

			boot, _ := sys["Boot"].(map[string]any)
			wantMode := map[any]plugins.BootMode{"UEFI": plugins.BootModeUEFI, "Legacy": plugins.BootModeBIOS}[boot["BootSourceOverrideMode"]]
			if mode, err := d.GetBootMode(ctx(t), n); err != nil || mode != wantMode {
				t.Errorf("boot mode %q, %v; the mockup says %v", mode, err, boot["BootSourceOverrideMode"])
			}

			on, err := d.GetSecureBoot(ctx(t), n)
			if sb, ok := m.res[sysPath+"/SecureBoot"]; ok {
				if err != nil || on != sb["SecureBootEnable"] {
					t.Errorf("secure boot %v, %v; the mockup says %v", on, err, sb["SecureBootEnable"])
				}
			} else if !errors.Is(err, plugins.ErrNotSupported) {
				t.Errorf("no SecureBoot resource: %v, %v; want ErrNotSupported", on, err)
			}

			inds, err := d.SupportedIndicators(ctx(t), n)
			must(t, "list indicators", err)
			ledOf := map[any]plugins.IndicatorState{"Lit": plugins.IndicatorOn, "Off": plugins.IndicatorOff, "Blinking": plugins.IndicatorBlinking}
			var sawSystem, sawDrive bool
			for _, in := range inds {
				res := m.res[sysPath]
				switch in.Component {
				case plugins.ComponentChassis:
					res = m.res["/redfish/v1/Chassis/"+in.Name]
				case plugins.ComponentDrive:
					res = m.find(t, "Drive", in.Name)
					sawDrive = true
				}
				if res == nil || res["Id"] != in.Name {
					t.Errorf("indicator %s@%s names no resource of the mockup", in.Name, in.Component)
					continue
				}
				sawSystem = sawSystem || in.Component == plugins.ComponentSystem
				st, err := d.GetIndicatorState(ctx(t), n, in.Component, in.Name)
				if want, ok := ledOf[res["IndicatorLED"]]; ok && (err != nil || st != want) {
					t.Errorf("%s@%s: %q, %v; the mockup says %v", in.Name, in.Component, st, err, res["IndicatorLED"])
				}
			}
			if _, has := sys["IndicatorLED"]; has != sawSystem {
				t.Errorf("system indicator listed %v, the mockup has IndicatorLED %v", sawSystem, has)
			}
			t.Logf("%d indicators, drives among them: %v", len(inds), sawDrive)
		})
	}
}

// find returns the mockup's resource of kind (an @odata.type such as
// "Drive") whose Id is id, the one under /Chassis when the mockup serves
// the same drive at several paths.
func (m *mockupBMC) find(t *testing.T, kind, id string) map[string]any {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	var found map[string]any
	for p, res := range m.res {
		if m.isType(p, kind) && res["Id"] == id && (found == nil || strings.HasPrefix(p, "/redfish/v1/Chassis/")) {
			found = res
		}
	}
	if found == nil {
		t.Errorf("no %s resource with Id %s", kind, id)
	}
	return found
}
