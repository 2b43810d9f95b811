package ipmi

import (
	"context"
	"errors"
	"testing"

	"github.com/rivetmetal/rivet/plugins"
)

// TestManagement2IPMI: setting the boot mode rewrites the boot flags' EFI
// bit and keeps the device override; reading it, secure boot and virtual
// media are ErrNotSupported saying why; the identify light is the one
// indicator and unknown ones are refused before any BMC traffic.
func TestManagement2IPMI(t *testing.T) {
	bmc := startBMC(t, bmcConfig{})
	d := newDriver(t, Options{})
	n := bmc.node(nil)
	want := plugins.BootDeviceSetting{Device: plugins.BootPXE, Persistent: true, Mode: plugins.BootModeBIOS}
	if err := d.SetBootDevice(testCtx(t), n, want); err != nil {
		t.Fatal(err)
	}
	if err := d.SetBootMode(testCtx(t), n, plugins.BootModeUEFI); err != nil {
		t.Fatalf("set uefi: %v", err)
	}
	got, err := d.GetBootDevice(testCtx(t), n)
	if err != nil || got.Device != plugins.BootPXE || !got.Persistent || got.Mode != plugins.BootModeUEFI {
		t.Fatalf("boot flags after uefi: %+v, %v", got, err)
	}
	if err := d.SetBootMode(testCtx(t), n, plugins.BootModeBIOS); err != nil {
		t.Fatalf("set bios: %v", err)
	}
	if got, _ := d.GetBootDevice(testCtx(t), n); got.Device != plugins.BootPXE || got.Mode != plugins.BootModeBIOS {
		t.Fatalf("boot flags after bios: %+v", got)
	}
	for what, err := range map[string]error{
		"get boot mode":   second(d.GetBootMode(testCtx(t), n)),
		"get secure boot": second(d.GetSecureBoot(testCtx(t), n)),
		"set secure boot": d.SetSecureBoot(testCtx(t), n, true),
		"get vmedia":      second(d.GetVirtualMedia(testCtx(t), n)),
		"attach vmedia":   d.AttachVirtualMedia(testCtx(t), n, plugins.VirtualMediaCDROM, "http://x/y.iso"),
		"detach vmedia":   d.DetachVirtualMedia(testCtx(t), n, nil),
		"other indicator": d.SetIndicatorState(testCtx(t), n, plugins.ComponentChassis, "identify", plugins.IndicatorOn),
	} {
		if !errors.Is(err, plugins.ErrNotSupported) {
			t.Errorf("%s: %v, want ErrNotSupported", what, err)
		}
	}
	inds, err := d.SupportedIndicators(testCtx(t), n)
	if err != nil || len(inds) != 1 || inds[0].Name != IdentifyName || inds[0].Component != plugins.ComponentSystem {
		t.Fatalf("indicators: %+v, %v", inds, err)
	}
	// go-ipmi's BMC passes Chassis Identify to its HAL (force on as 255
	// seconds) and reports the identify state as supported but always
	// off: the driver says what the BMC says.
	for _, tc := range []struct {
		st      plugins.IndicatorState
		seconds uint8
	}{{plugins.IndicatorOn, 0xFF}, {plugins.IndicatorOff, 0}, {plugins.IndicatorBlinking, IdentifyBlinkSeconds}, {plugins.IndicatorOff, 0}} {
		if err := d.SetIndicatorState(testCtx(t), n, plugins.ComponentSystem, IdentifyName, tc.st); err != nil {
			t.Fatalf("identify %s: %v", tc.st, err)
		}
		if got := bmc.chassis.identify.Load() - 1; got != int32(tc.seconds) {
			t.Errorf("identify %s: the BMC got %d seconds, want %d", tc.st, got, tc.seconds)
		}
		if got, err := d.GetIndicatorState(testCtx(t), n, plugins.ComponentSystem, IdentifyName); err != nil || got != plugins.IndicatorOff {
			t.Errorf("identify state after %s: %s, %v; the BMC reports off", tc.st, got, err)
		}
	}
}

// Identify records what the BMC's Chassis Identify handler passes on.
func (c *chassisSim) Identify(ctx context.Context, seconds uint8) error {
	c.identify.Store(int32(seconds) + 1)
	return c.Chassis.Identify(ctx, seconds)
}

func second[T any](_ T, err error) error { return err }
