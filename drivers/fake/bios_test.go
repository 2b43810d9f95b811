package fake_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// TestBIOSAndFirmwareOverTheWire: the bios and firmware interfaces
// (version 1) travel over protocol 2's BIOS and Firmware services with
// every field intact; over protocol 1 (how a release 0.1 conductor sees
// the plugin) they are not advertised and a call answers ErrNotSupported
// without reaching the driver.
func TestBIOSAndFirmwareOverTheWire(t *testing.T) {
	node := plugins.Node{UUID: "2c6a4f0e-7a0c-4d3c-9b9e-1f2e3d4c5b6a"}
	for name, tc := range map[string]struct {
		target func(t *testing.T) plugintest.Target
		served bool
	}{
		"in-process":            {func(t *testing.T) plugintest.Target { return plugintest.InProcess(t, fake.New(nil)) }, true},
		"in-process protocol 1": {func(t *testing.T) plugintest.Target { return plugintest.InProcessAt(t, fake.New(nil), 1) }, false},
	} {
		t.Run(name, func(t *testing.T) {
			tgt := tc.target(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, bios := tgt.Info.Interfaces[plugins.InterfaceBIOS]
			_, fw := tgt.Info.Interfaces[plugins.InterfaceFirmware]
			if bios != tc.served || fw != tc.served {
				t.Fatalf("advertised %v", tgt.Info.Interfaces)
			}
			b := tgt.Driver.(plugins.BIOSInterface)
			f := tgt.Driver.(plugins.FirmwareInterface)
			settings, err := b.GetBIOSSettings(ctx, node)
			if !tc.served {
				if !errors.Is(err, plugins.ErrNotSupported) {
					t.Errorf("GetBIOSSettings at protocol 1: %v, want ErrNotSupported", err)
				}
				if err := f.UpdateFirmware(ctx, node, []plugins.FirmwareUpdate{{Component: "bios", URL: "http://x/bios-2.bin"}}); !errors.Is(err, plugins.ErrNotSupported) {
					t.Errorf("UpdateFirmware at protocol 1: %v, want ErrNotSupported", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(settings, func(s plugins.BIOSSetting) bool { return s.Name == "ProcCoreDisable" })
			if i < 0 || *settings[i].Value != "0" || settings[i].AttributeType != "Integer" || *settings[i].UpperBound != 32 || settings[i].ReadOnly != nil {
				t.Fatalf("ProcCoreDisable over the wire: %+v", settings)
			}
			if err := b.ApplyBIOSSettings(ctx, node, []plugins.BIOSSettingValue{{Name: "BootMode", Value: "Legacy"}}); !errors.Is(err, plugins.ErrNotSupported) {
				t.Errorf("a value outside the allowable ones: %v", err)
			}
			if err := b.ApplyBIOSSettings(ctx, node, []plugins.BIOSSettingValue{{Name: "BootMode", Value: "Bios"}}); err != nil {
				t.Fatal(err)
			}
			settings, _ = b.GetBIOSSettings(ctx, node)
			if *settings[0].Value != "Bios" {
				t.Errorf("BootMode after apply: %s", *settings[0].Value)
			}
			if err := b.FactoryResetBIOS(ctx, node); err != nil {
				t.Fatal(err)
			}
			if err := f.UpdateFirmware(ctx, node, []plugins.FirmwareUpdate{{Component: "bmc", URL: "https://x/bmc-4.2.bin", Wait: time.Second}}); err != nil {
				t.Fatal(err)
			}
			comps, err := f.ListFirmwareComponents(ctx, node)
			want := []plugins.FirmwareComponent{{Component: "bios", CurrentVersion: "1.0.0"}, {Component: "bmc", CurrentVersion: "4.2"}}
			if err != nil || !slices.Equal(comps, want) {
				t.Errorf("components %v (%v), want %v", comps, err, want)
			}
		})
	}
}
