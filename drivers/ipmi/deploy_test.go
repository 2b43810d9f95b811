package ipmi

import (
	"context"
	"errors"
	"testing"

	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/rivetmetal/rivet/plugins"
)

func TestPrepareDeployValidates(t *testing.T) {
	tests := map[string]struct {
		instance map[string]any
		want     error
	}{
		"kernel and ramdisk":   {map[string]any{InstanceKernel: "http://i/k", InstanceRamdisk: "http://i/r"}, nil},
		"boot iso":             {map[string]any{InstanceBootISO: "http://i/x.iso", InstanceBootMode: "uefi"}, nil},
		"nothing":              {nil, ErrInvalidInstanceInfo},
		"kernel only":          {map[string]any{InstanceKernel: "http://i/k"}, ErrInvalidInstanceInfo},
		"ramdisk not a string": {map[string]any{InstanceKernel: "http://i/k", InstanceRamdisk: 7.0}, ErrInvalidInstanceInfo},
		"bad boot mode":        {map[string]any{InstanceBootISO: "http://i/x.iso", InstanceBootMode: "efi"}, ErrInvalidInstanceInfo},
	}
	d := newDriver(t, Options{})
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n := plugins.Node{DriverInfo: plugins.DriverInfo{KeyAddress: "192.0.2.1"}, InstanceInfo: tc.instance}
			// PrepareDeploy does no BMC I/O: 192.0.2.1 (TEST-NET) is never contacted.
			if err := d.PrepareDeploy(context.Background(), n); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("PrepareDeploy: %v, want %v", err, tc.want)
			}
		})
	}
	if err := d.PrepareDeploy(context.Background(), plugins.Node{InstanceInfo: tests["boot iso"].instance}); !errors.Is(err, plugins.ErrInvalidDriverInfo) {
		t.Errorf("PrepareDeploy without driver_info: %v, want ErrInvalidDriverInfo", err)
	}
}

// TestDeploy: Deploy leaves a one-time PXE override in the requested mode
// and the node on; TearDown powers it off, twice without error.
func TestDeploy(t *testing.T) {
	bmc := startBMC(t, bmcConfig{})
	d := newDriver(t, Options{})
	n := bmc.node(nil)
	n.InstanceInfo[InstanceBootMode] = "uefi"
	if err := d.Deploy(testCtx(t), n); err != nil {
		t.Fatal(err)
	}
	flags, err := bmc.chassis.GetBootFlags(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if flags.BootDeviceSelector != types.BootDeviceSelectorForcePXE || flags.Persist || flags.BIOSBootType != types.BIOSBootTypeEFI {
		t.Errorf("boot flags %+v, want PXE, once, EFI", flags)
	}
	if !bmc.chassis.on(t) {
		t.Error("node off after Deploy")
	}
	for range 2 {
		if err := d.TearDown(testCtx(t), n); err != nil {
			t.Fatal(err)
		}
		if bmc.chassis.on(t) {
			t.Error("node on after TearDown")
		}
	}
}
