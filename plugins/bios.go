package plugins

import (
	"context"
	"time"
)

// Hardware interfaces added with protocol 2: each is served by its own gRPC
// service (bios.proto, firmware.proto) and negotiated at version 1.
const (
	InterfaceBIOS     Interface = "bios"
	InterfaceFirmware Interface = "firmware"
)

// BIOSSetting is one BIOS setting as the hardware reports it: its current
// value and what the hardware's attribute registry says of it (Ironic's
// BIOSSetting with the registry fields of API 1.74). A registry field the
// hardware does not give is left at its zero value (nil, "", empty).
type BIOSSetting struct {
	Name string
	// Value is the current value as a string (numbers and booleans
	// formatted as JSON), nil when the hardware reports null.
	Value *string
	// AttributeType is the registry's type: "Enumeration", "String",
	// "Integer", "Boolean" or "Password".
	AttributeType string
	// AllowableValues lists an Enumeration's value names.
	AllowableValues []string
	// LowerBound and UpperBound bound an Integer.
	LowerBound, UpperBound *int64
	// MinLength and MaxLength bound a String.
	MinLength, MaxLength *int64
	// ReadOnly: the setting cannot be changed. ResetRequired: a change
	// needs a reboot. Unique: the value is unique to this system.
	ReadOnly, ResetRequired, Unique *bool
}

// BIOSSettingValue is one setting to change, as Ironic's apply_configuration
// takes it ({"name": ..., "value": ...}); the value is a string and the
// driver converts it to the type its registry gives.
type BIOSSettingValue struct {
	Name  string
	Value string
}

// BIOSInterface is the "bios" hardware interface (version 1). The
// conductor reads the settings after inspection, cleaning and its own
// apply_configuration and factory_reset steps (Ironic's
// cache_bios_settings) and runs those steps through the other two methods.
type BIOSInterface interface {
	// GetBIOSSettings reads every current setting with its registry facts.
	GetBIOSSettings(ctx context.Context, node Node) ([]BIOSSetting, error)
	// ApplyBIOSSettings changes the given settings and returns once they
	// are in force: hardware that applies them on the next reset (Redfish
	// @Redfish.Settings) is rebooted and read back. A setting the hardware
	// refuses is an error naming it; one it does not know wraps
	// ErrNotSupported.
	ApplyBIOSSettings(ctx context.Context, node Node, settings []BIOSSettingValue) error
	// FactoryResetBIOS restores the defaults and returns once they are in
	// force.
	FactoryResetBIOS(ctx context.Context, node Node) error
}

// FirmwareComponent is one firmware component of a node and the version it
// runs now (Ironic's FirmwareComponent current_version). Components are
// named as Ironic names them: "bios", "bmc", and "nic:<id>" for a network
// adapter.
type FirmwareComponent struct {
	Component      string
	CurrentVersion string
}

// FirmwareUpdate is one item of Ironic's firmware update step's settings:
// the component to flash, the image's http(s) URL and an optional wait
// after the update.
type FirmwareUpdate struct {
	Component string
	URL       string
	Wait      time.Duration
}

// FirmwareInterface is the "firmware" hardware interface (version 1).
type FirmwareInterface interface {
	// ListFirmwareComponents reads the node's components and versions.
	ListFirmwareComponents(ctx context.Context, node Node) ([]FirmwareComponent, error)
	// UpdateFirmware flashes the components in order and returns once each
	// update finished, or with the first failure (naming the component).
	UpdateFirmware(ctx context.Context, node Node, updates []FirmwareUpdate) error
}
