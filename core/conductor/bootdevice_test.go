package conductor

import (
	"context"
	"testing"

	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
)

// noOverride is a driver whose BMC reports no boot device override (a
// fresh IPMI BMC): GetBootDevice answers the zero setting.
type noOverride struct{ *hookedFake }

func (noOverride) GetBootDevice(context.Context, plugins.Node) (plugins.BootDeviceSetting, error) {
	return plugins.BootDeviceSetting{}, nil
}

// TestGetBootDeviceUnknown: a BMC with no boot override in force reads as
// Ironic's {"boot_device": null, "persistent": null}, not an error.
func TestGetBootDeviceUnknown(t *testing.T) {
	h := startHarness(t, nil, "cond-a", nil, func(hw *hookedFake) StaticDrivers {
		return StaticDrivers{fake.HardwareType: noOverride{hw}}
	})
	n := h.node(h.enroll("node-1").UUID)
	bd, err := h.api.GetBootDevice(context.Background(), n)
	if err != nil {
		t.Fatalf("get boot device on a BMC without override: %v", err)
	}
	if bd.BootDevice != nil || bd.Persistent != nil {
		t.Errorf("boot device %v persistent %v, want both null", deref(bd.BootDevice), bd.Persistent)
	}
}
