package ipmi

import (
	"context"
	"fmt"
	"slices"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/command/chassis"
	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/rivetmetal/rivet/plugins"
)

// selectors maps Ironic's boot devices to IPMI boot device selectors
// (Set System Boot Options, parameter 5).
var selectors = map[plugins.BootDevice]types.BootDeviceSelector{
	plugins.BootPXE:   types.BootDeviceSelectorForcePXE,
	plugins.BootDisk:  types.BootDeviceSelectorForceHardDrive,
	plugins.BootCDROM: types.BootDeviceSelectorForceCDROM,
	plugins.BootBIOS:  types.BootDeviceSelectorForceBIOSSetup,
}

var supportedDevices = []plugins.BootDevice{plugins.BootPXE, plugins.BootDisk, plugins.BootCDROM, plugins.BootBIOS}

// SetBootDevice implements plugins.BootDeviceSetter. Mode uefi sets the EFI
// boot type bit; bios and unknown leave it clear (legacy), as ipmitool does
// without options=efiboot.
func (d *Driver) SetBootDevice(ctx context.Context, node plugins.Node, setting plugins.BootDeviceSetting) error {
	op := "set boot device " + string(setting.Device)
	sel, ok := selectors[setting.Device]
	if !ok {
		return fmt.Errorf("ipmi: %s: %w", op, plugins.ErrNotSupported)
	}
	bootType := types.BIOSBootTypeLegacy
	if setting.Mode == plugins.BootModeUEFI {
		bootType = types.BIOSBootTypeEFI
	}
	_, err := d.do(ctx, node, op, func(ctx context.Context, c *client.Client) error {
		return errNotSupportedCC(c.SetBootDevice(ctx, sel, bootType, setting.Persistent), "boot device "+string(setting.Device))
	})
	return err
}

// GetBootDevice implements plugins.BootDeviceGetter from the boot flags
// (parameter 5). The device comes from the selector even when the BMC
// marks the flags invalid (consumed, or a BMC such as ipmi_sim that never
// sets the bit); Mode is unknown when the flags are invalid and legacy is
// not stated. With no override in force (selector "no override", or a
// fresh BMC that answers the parameter with cc 0x80, "not set") the device
// is unknown: the zero setting, which the API shows as null, as Ironic's
// ipmitool driver does.
func (d *Driver) GetBootDevice(ctx context.Context, node plugins.Node) (plugins.BootDeviceSetting, error) {
	flags := &types.BootOptionParam_BootFlags{}
	unset := false
	p, err := d.do(ctx, node, "get boot device", func(ctx context.Context, c *client.Client) error {
		err := c.GetSystemBootOptionsParamFor(ctx, flags)
		if cc, ok := completionCode(err); ok && cc == ccParamNotSet {
			unset = true
			return nil
		}
		return err
	})
	if err != nil || unset {
		return plugins.BootDeviceSetting{}, err
	}
	for dev, sel := range selectors {
		if sel != flags.BootDeviceSelector {
			continue
		}
		mode := plugins.BootModeUnknown
		switch {
		case flags.BIOSBootType == types.BIOSBootTypeEFI:
			mode = plugins.BootModeUEFI
		case flags.BootFlagsValid:
			mode = plugins.BootModeBIOS
		}
		return plugins.BootDeviceSetting{Device: dev, Persistent: flags.Persist, Mode: mode}, nil
	}
	if flags.BootDeviceSelector == types.BootDeviceSelectorNoOverride {
		return plugins.BootDeviceSetting{}, nil
	}
	return plugins.BootDeviceSetting{}, fmt.Errorf("ipmi %s: get boot device: selector %s has no Ironic name: %w",
		p.addr(), flags.BootDeviceSelector, plugins.ErrNotSupported)
}

// SupportedBootDevices implements plugins.SupportedBootDevicesLister.
func (d *Driver) SupportedBootDevices(context.Context, plugins.Node) ([]plugins.BootDevice, error) {
	return slices.Clone(supportedDevices), nil
}

// InjectNMI implements plugins.NMIInjector (Chassis Control diagnostic
// interrupt). BMCs without it (ipmi_sim answers 0xCC) give ErrNotSupported.
func (d *Driver) InjectNMI(ctx context.Context, node plugins.Node) error {
	_, err := d.do(ctx, node, "inject NMI", func(ctx context.Context, c *client.Client) error {
		_, err := c.ChassisControl(ctx, chassis.ChassisControlDiagnosticInterrupt)
		return errNotSupportedCC(err, "the diagnostic interrupt (NMI)")
	})
	return err
}

// errNotSupportedCC maps the completion codes BMCs use for "I cannot do
// that" to ErrNotSupported, keeping the code in the text.
func errNotSupportedCC(err error, what string) error {
	cc, ok := completionCode(err)
	if !ok {
		return err
	}
	switch cc {
	case ccInvalidCommand, ccParamOutOfRange, ccInvalidDataField, ccNotInPresentState, ccDisabled, 0x80:
		return fmt.Errorf("BMC does not support %s (completion code %#02x): %w", what, uint8(cc), plugins.ErrNotSupported)
	}
	return err
}
