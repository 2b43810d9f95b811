package plugins

import (
	"context"
	"fmt"
)

// BootDevice is a boot device, spelled as Ironic's boot_devices.
type BootDevice string

// Boot devices.
const (
	BootPXE   BootDevice = "pxe"
	BootDisk  BootDevice = "disk"
	BootCDROM BootDevice = "cdrom"
	BootBIOS  BootDevice = "bios"
)

// Valid reports whether d is a known boot device.
func (d BootDevice) Valid() bool {
	switch d {
	case BootPXE, BootDisk, BootCDROM, BootBIOS:
		return true
	}
	return false
}

// ParseBootDevice validates s, as received from the wire.
func ParseBootDevice(s string) (BootDevice, error) {
	d := BootDevice(s)
	if !d.Valid() {
		return "", fmt.Errorf("unknown boot device %q", s)
	}
	return d, nil
}

// BootMode is the firmware boot mode, spelled as Ironic's boot_modes.
type BootMode string

// Boot modes. BootModeUnknown (the empty string) means "leave as is" when
// setting and "the BMC does not say" when getting.
const (
	BootModeUnknown BootMode = ""
	BootModeUEFI    BootMode = "uefi"
	BootModeBIOS    BootMode = "bios"
)

// ParseBootMode validates s, as received from the wire.
func ParseBootMode(s string) (BootMode, error) {
	switch m := BootMode(s); m {
	case BootModeUnknown, BootModeUEFI, BootModeBIOS:
		return m, nil
	}
	return "", fmt.Errorf("unknown boot mode %q", s)
}

// BootDeviceSetting is a boot device override.
type BootDeviceSetting struct {
	// Device is the device to boot from.
	Device BootDevice
	// Persistent keeps the override for every later boot; false means the
	// next boot only.
	Persistent bool
	// Mode is the boot mode to use with the override, or BootModeUnknown.
	Mode BootMode
}

// BootDeviceGetter reads the current boot device override. A BMC that
// reports none, or one the SDK has no name for, gives the zero
// BootDeviceSetting (Device ""): the API shows it as Ironic's
// {"boot_device": null, "persistent": null}.
type BootDeviceGetter interface {
	GetBootDevice(ctx context.Context, node Node) (BootDeviceSetting, error)
}

// BootDeviceSetter sets the boot device for the next boot (or every boot
// when setting.Persistent). A device the node does not support is an error
// wrapping ErrNotSupported.
type BootDeviceSetter interface {
	SetBootDevice(ctx context.Context, node Node, setting BootDeviceSetting) error
}

// SupportedBootDevicesLister lists the boot devices SetBootDevice accepts
// for node.
type SupportedBootDevicesLister interface {
	SupportedBootDevices(ctx context.Context, node Node) ([]BootDevice, error)
}

// NMIInjector sends a non-maskable interrupt to a node (to make a hung OS
// dump its kernel). Optional: implementing it advertises CapabilityNMI.
type NMIInjector interface {
	InjectNMI(ctx context.Context, node Node) error
}

// ManagementInterface is the "management" hardware interface. NMI is an
// optional extra (NMIInjector).
type ManagementInterface interface {
	BootDeviceGetter
	BootDeviceSetter
	SupportedBootDevicesLister
}
