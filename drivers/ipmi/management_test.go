package ipmi

import (
	"errors"
	"strings"
	"testing"

	"github.com/bougou/go-ipmi/pkg/hal/mock"
	"github.com/bougou/go-ipmi/pkg/types"
	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// TestBootDeviceRoundTrip sets every device, once and persistent, in both
// modes, and reads it back; go-ipmi's BMC keeps the whole boot flags byte.
func TestBootDeviceRoundTrip(t *testing.T) {
	bmc := startBMC(t, bmcConfig{})
	d := newDriver(t, Options{})
	n := bmc.node(nil)
	devs, err := d.SupportedBootDevices(testCtx(t), n)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]plugins.BootDevice{plugins.BootPXE, plugins.BootDisk, plugins.BootCDROM, plugins.BootBIOS}, devs); diff != "" {
		t.Errorf("supported devices (-want +got):\n%s", diff)
	}
	for _, dev := range devs {
		for _, persistent := range []bool{false, true} {
			for _, mode := range []plugins.BootMode{plugins.BootModeUEFI, plugins.BootModeBIOS} {
				want := plugins.BootDeviceSetting{Device: dev, Persistent: persistent, Mode: mode}
				if err := d.SetBootDevice(testCtx(t), n, want); err != nil {
					t.Fatalf("set %+v: %v", want, err)
				}
				got, err := d.GetBootDevice(testCtx(t), n)
				if err != nil {
					t.Fatalf("get after %+v: %v", want, err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("boot device (-want +got):\n%s", diff)
				}
			}
		}
	}
}

// TestBootDeviceUnknown: a device without an IPMI selector is refused
// before any BMC traffic.
func TestBootDeviceUnknown(t *testing.T) {
	d := newDriver(t, Options{})
	err := d.SetBootDevice(testCtx(t), plugins.Node{}, plugins.BootDeviceSetting{Device: "floppy"})
	if !errors.Is(err, plugins.ErrNotSupported) {
		t.Errorf("set floppy: %v, want ErrNotSupported", err)
	}
}

// TestInjectNMI: a BMC that implements the diagnostic interrupt gets one;
// one that refuses it (go-ipmi's stock handler, cc 0xC9, like ipmi_sim's
// 0xCC) gives ErrNotSupported naming the code.
func TestInjectNMI(t *testing.T) {
	tests := map[string]struct {
		noNMI    bool
		cc       types.CompletionCode // the BMC's refusal, 0: none
		wantErr  error
		wantCC   string
		wantNMIs int32
	}{
		"supported":       {wantNMIs: 1},
		"unsupported":     {noNMI: true, wantErr: plugins.ErrNotSupported, wantCC: "0xc9"},
		"disabled (0xd6)": {cc: 0xD6, wantErr: plugins.ErrNotSupported, wantCC: "0xd6"},
		"not now (0xd5)":  {cc: 0xD5, wantErr: plugins.ErrNotSupported, wantCC: "0xd5"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			bmc := startBMC(t, bmcConfig{noNMI: tc.noNMI, chasis: &chassisSim{Chassis: &mock.Chassis{}, nmiCC: tc.cc}})
			d := newDriver(t, Options{})
			err := d.InjectNMI(testCtx(t), bmc.node(nil))
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("InjectNMI: %v, want %v", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "completion code "+tc.wantCC) {
				t.Errorf("error %q does not name the completion code", err)
			}
			if got := bmc.chassis.nmis.Load(); got != tc.wantNMIs {
				t.Errorf("BMC saw %d NMIs, want %d", got, tc.wantNMIs)
			}
		})
	}
}

// TestBootDeviceFreshBMC: a BMC that never had a boot override (selector
// "no override") reads as the zero setting, which the API shows as
// Ironic's {"boot_device": null, "persistent": null}; not an error. The
// same through the SDK's gRPC boundary.
func TestBootDeviceFreshBMC(t *testing.T) {
	bmc := startBMC(t, bmcConfig{})
	d := newDriver(t, Options{})
	for name, g := range map[string]plugins.BootDeviceGetter{
		"direct":     d,
		"in-process": plugintest.InProcess(t, d).Driver.(plugins.BootDeviceGetter),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := g.GetBootDevice(testCtx(t), bmc.node(nil))
			if err != nil {
				t.Fatalf("get boot device on a fresh BMC: %v", err)
			}
			if got != (plugins.BootDeviceSetting{}) {
				t.Errorf("boot device %+v, want the zero setting (unknown)", got)
			}
		})
	}
}
