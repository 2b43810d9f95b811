package plugins

import (
	"context"
	"fmt"
	"testing"
)

type mgmtOnly struct{ powerOnly }

func (mgmtOnly) GetBootDevice(context.Context, Node) (BootDeviceSetting, error) {
	return BootDeviceSetting{}, nil
}
func (mgmtOnly) SetBootDevice(context.Context, Node, BootDeviceSetting) error { return nil }
func (mgmtOnly) SupportedBootDevices(context.Context, Node) ([]BootDevice, error) {
	return nil, nil
}

type mgmtV2 struct{ mgmtOnly }

func (mgmtV2) GetBootMode(context.Context, Node) (BootMode, error)            { return BootModeUEFI, nil }
func (mgmtV2) SetBootMode(context.Context, Node, BootMode) error              { return nil }
func (mgmtV2) GetSecureBoot(context.Context, Node) (bool, error)              { return false, nil }
func (mgmtV2) SetSecureBoot(context.Context, Node, bool) error                { return nil }
func (mgmtV2) SupportedIndicators(context.Context, Node) ([]Indicator, error) { return nil, nil }
func (mgmtV2) GetIndicatorState(context.Context, Node, string, string) (IndicatorState, error) {
	return IndicatorOff, nil
}
func (mgmtV2) SetIndicatorState(context.Context, Node, string, string, IndicatorState) error {
	return nil
}
func (mgmtV2) GetVirtualMedia(context.Context, Node) ([]VirtualMedia, error) { return nil, nil }
func (mgmtV2) AttachVirtualMedia(context.Context, Node, VirtualMediaDevice, string) error {
	return nil
}
func (mgmtV2) DetachVirtualMedia(context.Context, Node, []VirtualMediaDevice) error { return nil }

// TestDescribeManagement2: a driver implementing ManagementInterfaceV2
// advertises management versions 1 and 2 under every protocol major (the
// Management2 service is additive); one with the version 1 methods only
// advertises 1.
func TestDescribeManagement2(t *testing.T) {
	desc := Description{Name: "x", HardwareTypes: []string{"x-hw"}}
	for name, tc := range map[string]struct {
		d         Driver
		protocols []int
		want      string
	}{
		"v1":               {mgmtOnly{powerOnly{descOnly{desc}}}, Protocols(), "[1]"},
		"v2":               {mgmtV2{mgmtOnly{powerOnly{descOnly{desc}}}}, Protocols(), "[1 2]"},
		"v2 at protocol 1": {mgmtV2{mgmtOnly{powerOnly{descOnly{desc}}}}, []int{1}, "[1 2]"},
	} {
		info, err := Describe(tc.d, tc.protocols)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := fmt.Sprint(info.Interfaces[InterfaceManagement]); got != tc.want {
			t.Errorf("%s: management %s, want %s", name, got, tc.want)
		}
	}
}

// TestParseManagement2Values: the wire values are Ironic's spellings.
func TestParseManagement2Values(t *testing.T) {
	for _, s := range []string{"", "UEFI", "legacy"} {
		if _, err := ParseTargetBootMode(s); err == nil {
			t.Errorf("boot mode %q accepted", s)
		}
	}
	if _, err := ParseTargetIndicatorState("UNKNOWN"); err == nil {
		t.Error("UNKNOWN accepted as a target")
	}
	if st, err := ParseIndicatorState("UNKNOWN"); err != nil || st != IndicatorUnknown {
		t.Errorf("UNKNOWN read: %v", err)
	}
	for _, s := range []string{"CDROM", "usb", ""} {
		if _, err := ParseVirtualMediaDevice(s); err == nil {
			t.Errorf("device type %q accepted", s)
		}
	}
}
