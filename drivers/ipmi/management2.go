package ipmi

import (
	"context"
	"fmt"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/command/chassis"
	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/rivetmetal/rivet/plugins"
)

// Management interface version 2 over IPMI, where the protocol allows:
//   - the boot mode is the boot type (EFI) bit of the boot flags (Set
//     System Boot Options, parameter 5). It can be set, but not read back
//     reliably: the bit describes how the next override boots, BMCs clear
//     or keep it as they please once the flags are used, and nothing in IPMI
//     says which mode the firmware actually booted. GetBootMode therefore
//     answers ErrNotSupported, and the conductor keeps the mode last set.
//   - secure boot and virtual media do not exist in IPMI: ErrNotSupported.
//   - the one indicator is the chassis identify light, as Ironic's
//     "system" component: ON is Chassis Identify with force on, BLINKING a
//     timed identify (IdentifyBlinkSeconds, the BMC blinks then stops),
//     OFF an interval of 0. Its state comes from Get Chassis Status when
//     the BMC reports it, UNKNOWN otherwise.

var _ plugins.ManagementInterfaceV2 = (*Driver)(nil)

// IdentifyName names the identify light among the system's indicators.
const IdentifyName = "identify"

// IdentifyBlinkSeconds is how long a BLINKING identify lasts: IPMI's
// interval is at most 255 seconds; the BMC turns the light off after it.
const IdentifyBlinkSeconds = 255

// GetBootMode implements plugins.BootModeManager: IPMI cannot report the
// boot mode reliably (see above).
func (d *Driver) GetBootMode(context.Context, plugins.Node) (plugins.BootMode, error) {
	return "", fmt.Errorf("ipmi: reading the boot mode: IPMI has no reliable way to report it (the boot flags' EFI bit only says how the next override boots): %w", plugins.ErrNotSupported)
}

// SetBootMode implements plugins.BootModeManager: it writes the boot flags
// back with the EFI bit set (uefi) or clear (bios), keeping the device
// override and its persistence; with no override in force, a persistent
// "no override" carries the bit. Whether the firmware honours the bit
// without a device override is the BMC's choice.
func (d *Driver) SetBootMode(ctx context.Context, node plugins.Node, mode plugins.BootMode) error {
	bootType := types.BIOSBootTypeLegacy
	switch mode {
	case plugins.BootModeUEFI:
		bootType = types.BIOSBootTypeEFI
	case plugins.BootModeBIOS:
	default:
		return fmt.Errorf("ipmi: boot mode %q: %w", mode, plugins.ErrNotSupported)
	}
	_, err := d.do(ctx, node, "set boot mode "+string(mode), func(ctx context.Context, c *client.Client) error {
		flags := &types.BootOptionParam_BootFlags{}
		sel, persist := types.BootDeviceSelectorNoOverride, true
		err := c.GetSystemBootOptionsParamFor(ctx, flags)
		switch cc, isCC := completionCode(err); {
		case err == nil && flags.BootDeviceSelector != types.BootDeviceSelectorNoOverride:
			sel, persist = flags.BootDeviceSelector, flags.Persist
		case err != nil && !(isCC && cc == ccParamNotSet):
			return err
		}
		return errNotSupportedCC(c.SetBootDevice(ctx, sel, bootType, persist), "the boot type bit")
	})
	return err
}

// GetSecureBoot implements plugins.BootModeManager: not in IPMI.
func (d *Driver) GetSecureBoot(context.Context, plugins.Node) (bool, error) {
	return false, fmt.Errorf("ipmi: secure boot: IPMI has no secure boot control; use a redfish node: %w", plugins.ErrNotSupported)
}

// SetSecureBoot implements plugins.BootModeManager: not in IPMI.
func (d *Driver) SetSecureBoot(context.Context, plugins.Node, bool) error {
	return fmt.Errorf("ipmi: secure boot: IPMI has no secure boot control; use a redfish node: %w", plugins.ErrNotSupported)
}

func identifyIndicator() plugins.Indicator {
	return plugins.Indicator{Component: plugins.ComponentSystem, Name: IdentifyName,
		States: []plugins.IndicatorState{plugins.IndicatorBlinking, plugins.IndicatorOff, plugins.IndicatorOn}}
}

func checkIdentify(component, name string) error {
	if component != plugins.ComponentSystem || name != IdentifyName {
		return fmt.Errorf("ipmi: no indicator %s on component %s (the only one is %s@%s): %w",
			name, component, IdentifyName, plugins.ComponentSystem, plugins.ErrNotSupported)
	}
	return nil
}

// SupportedIndicators implements plugins.IndicatorManager: the identify
// light, without asking the BMC.
func (d *Driver) SupportedIndicators(context.Context, plugins.Node) ([]plugins.Indicator, error) {
	return []plugins.Indicator{identifyIndicator()}, nil
}

// GetIndicatorState implements plugins.IndicatorManager from Get Chassis
// Status; UNKNOWN when the BMC does not report the identify state.
func (d *Driver) GetIndicatorState(ctx context.Context, node plugins.Node, component, name string) (plugins.IndicatorState, error) {
	if err := checkIdentify(component, name); err != nil {
		return "", err
	}
	st := plugins.IndicatorUnknown
	_, err := d.do(ctx, node, "get chassis identify state", func(ctx context.Context, c *client.Client) error {
		resp, err := c.GetChassisStatus(ctx)
		if err != nil {
			return err
		}
		if resp.ChassisIdentifySupported {
			switch resp.ChassisIdentifyState {
			case chassis.ChassisIdentifyStateOff:
				st = plugins.IndicatorOff
			case chassis.ChassisIdentifyStateTemporaryOn:
				st = plugins.IndicatorBlinking
			case chassis.ChassisIdentifyStateIndefiniteOn:
				st = plugins.IndicatorOn
			}
		}
		return nil
	})
	return st, err
}

// SetIndicatorState implements plugins.IndicatorManager with Chassis
// Identify.
func (d *Driver) SetIndicatorState(ctx context.Context, node plugins.Node, component, name string, state plugins.IndicatorState) error {
	if err := checkIdentify(component, name); err != nil {
		return err
	}
	var interval uint8
	force := false
	switch state {
	case plugins.IndicatorOn:
		force = true
	case plugins.IndicatorBlinking:
		interval = IdentifyBlinkSeconds
	case plugins.IndicatorOff:
	default:
		return fmt.Errorf("ipmi: identify state %q: %w", state, plugins.ErrNotSupported)
	}
	_, err := d.do(ctx, node, "chassis identify "+string(state), func(ctx context.Context, c *client.Client) error {
		_, err := c.ChassisIdentify(ctx, interval, force)
		return errNotSupportedCC(err, "chassis identify")
	})
	return err
}

func noVirtualMedia() error {
	return fmt.Errorf("ipmi: virtual media: IPMI has none; use a redfish node: %w", plugins.ErrNotSupported)
}

// GetVirtualMedia implements plugins.VirtualMediaManager: not in IPMI.
func (d *Driver) GetVirtualMedia(context.Context, plugins.Node) ([]plugins.VirtualMedia, error) {
	return nil, noVirtualMedia()
}

// AttachVirtualMedia implements plugins.VirtualMediaManager: not in IPMI.
func (d *Driver) AttachVirtualMedia(context.Context, plugins.Node, plugins.VirtualMediaDevice, string) error {
	return noVirtualMedia()
}

// DetachVirtualMedia implements plugins.VirtualMediaManager: not in IPMI.
func (d *Driver) DetachVirtualMedia(context.Context, plugins.Node, []plugins.VirtualMediaDevice) error {
	return noVirtualMedia()
}
