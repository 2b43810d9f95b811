package plugins

import (
	"context"
	"fmt"
	"slices"
)

// Management interface version 2: version 1 (boot devices) plus the boot
// mode, UEFI secure boot, indicators and virtual media. A driver serves it
// by implementing ManagementInterfaceV2; a method the hardware cannot do
// returns an error wrapping ErrNotSupported.

// ParseTargetBootMode validates a boot mode to set: "uefi" or "bios" (the
// empty BootModeUnknown is not a target).
func ParseTargetBootMode(s string) (BootMode, error) {
	switch m := BootMode(s); m {
	case BootModeUEFI, BootModeBIOS:
		return m, nil
	}
	return "", fmt.Errorf("unknown boot mode %q (valid are uefi, bios)", s)
}

// IndicatorState is an indicator's state, spelled as Ironic's
// indicator_states.
type IndicatorState string

// Indicator states. IndicatorUnknown is only ever read, never set.
const (
	IndicatorOn       IndicatorState = "ON"
	IndicatorOff      IndicatorState = "OFF"
	IndicatorBlinking IndicatorState = "BLINKING"
	IndicatorUnknown  IndicatorState = "UNKNOWN"
)

// ParseIndicatorState validates a state read from the wire.
func ParseIndicatorState(s string) (IndicatorState, error) {
	switch st := IndicatorState(s); st {
	case IndicatorOn, IndicatorOff, IndicatorBlinking, IndicatorUnknown:
		return st, nil
	}
	return "", fmt.Errorf("unknown indicator state %q (valid are ON, OFF, BLINKING, UNKNOWN)", s)
}

// ParseTargetIndicatorState validates a state to set: ON, OFF or BLINKING.
func ParseTargetIndicatorState(s string) (IndicatorState, error) {
	st, err := ParseIndicatorState(s)
	if err != nil || st == IndicatorUnknown {
		return "", fmt.Errorf("invalid indicator state %q (valid are ON, OFF, BLINKING)", s)
	}
	return st, nil
}

// Indicator components, as Ironic's components.
const (
	ComponentSystem  = "system"
	ComponentChassis = "chassis"
	ComponentDrive   = "drive"
	ComponentDisk    = "disk"
)

// Indicator is one indicator (LED) of a hardware component.
type Indicator struct {
	// Component is Ironic's component name: ComponentSystem,
	// ComponentChassis, ComponentDrive...
	Component string
	// Name identifies the indicator within its component; it never holds
	// "@" (the API's separator).
	Name string
	// Readonly is true when the state can be read but not set.
	Readonly bool
	// States lists the states the indicator takes.
	States []IndicatorState
}

// VirtualMediaDevice is a virtual media device type, spelled as Ironic's
// boot_devices.VMEDIA_DEVICES.
type VirtualMediaDevice string

// Virtual media device types.
const (
	VirtualMediaCDROM  VirtualMediaDevice = "cdrom"
	VirtualMediaFloppy VirtualMediaDevice = "floppy"
	VirtualMediaDisk   VirtualMediaDevice = "disk"
)

// VirtualMediaDevices lists the valid device types, in Ironic's order.
func VirtualMediaDevices() []VirtualMediaDevice {
	return []VirtualMediaDevice{VirtualMediaDisk, VirtualMediaCDROM, VirtualMediaFloppy}
}

// ParseVirtualMediaDevice validates a device type, spelled exactly as
// Ironic's (lower case).
func ParseVirtualMediaDevice(s string) (VirtualMediaDevice, error) {
	d := VirtualMediaDevice(s)
	if !slices.Contains(VirtualMediaDevices(), d) {
		return "", fmt.Errorf("invalid virtual media device type %q (valid are disk, cdrom, floppy)", s)
	}
	return d, nil
}

// VirtualMedia is one virtual media slot as the BMC reports it.
type VirtualMedia struct {
	// Device is the device type the slot serves, "" when its media types
	// name none the SDK knows.
	Device VirtualMediaDevice
	// MediaTypes are the slot's own media types ("CD", "DVD", "USBStick").
	MediaTypes []string
	// Inserted reports whether media is in the slot.
	Inserted bool
	// Image is the inserted image's URL, without credentials.
	Image string
}

// BootModeManager reads and sets the firmware boot mode and UEFI secure
// boot. GetBootMode returns BootModeUnknown when the BMC does not say.
type BootModeManager interface {
	GetBootMode(ctx context.Context, node Node) (BootMode, error)
	SetBootMode(ctx context.Context, node Node, mode BootMode) error
	GetSecureBoot(ctx context.Context, node Node) (bool, error)
	SetSecureBoot(ctx context.Context, node Node, enabled bool) error
}

// IndicatorManager reads and sets the hardware's indicators (LEDs). An
// indicator the node does not have, or a state it cannot take, is an error
// wrapping ErrNotSupported (the API's 400, as Ironic's InvalidParameterValue).
type IndicatorManager interface {
	SupportedIndicators(ctx context.Context, node Node) ([]Indicator, error)
	GetIndicatorState(ctx context.Context, node Node, component, name string) (IndicatorState, error)
	SetIndicatorState(ctx context.Context, node Node, component, name string, state IndicatorState) error
}

// VirtualMediaManager attaches and detaches virtual media. DetachVirtualMedia
// with no device types ejects every slot.
type VirtualMediaManager interface {
	GetVirtualMedia(ctx context.Context, node Node) ([]VirtualMedia, error)
	AttachVirtualMedia(ctx context.Context, node Node, device VirtualMediaDevice, imageURL string) error
	DetachVirtualMedia(ctx context.Context, node Node, devices []VirtualMediaDevice) error
}

// ManagementInterfaceV2 is the management interface at version 2. A driver
// implementing it advertises management versions 1 and 2.
type ManagementInterfaceV2 interface {
	ManagementInterface
	BootModeManager
	IndicatorManager
	VirtualMediaManager
}
