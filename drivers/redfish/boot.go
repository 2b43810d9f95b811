package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/stmcginnis/gofish/schemas"

	"github.com/rivetmetal/rivet/plugins"
)

// bootSources maps the SDK's boot devices to Redfish override targets.
var bootSources = []struct {
	device plugins.BootDevice
	source schemas.BootSource
}{
	{plugins.BootPXE, schemas.PxeBootSource},
	{plugins.BootCDROM, schemas.CdBootSource},
	{plugins.BootDisk, schemas.HddBootSource},
	{plugins.BootBIOS, schemas.BiosSetupBootSource},
}

func sourceOf(dev plugins.BootDevice) (schemas.BootSource, bool) {
	for _, b := range bootSources {
		if b.device == dev {
			return b.source, true
		}
	}
	return "", false
}

func deviceOf(src schemas.BootSource) (plugins.BootDevice, bool) {
	for _, b := range bootSources {
		if b.source == src {
			return b.device, true
		}
	}
	return "", false
}

// bootModes maps the SDK's boot modes to Redfish's.
var bootModes = map[plugins.BootMode]schemas.BootSourceOverrideMode{
	plugins.BootModeUEFI: schemas.UEFIBootSourceOverrideMode,
	plugins.BootModeBIOS: schemas.LegacyBootSourceOverrideMode,
}

// GetBootDevice implements plugins.BootDeviceGetter. With no override in
// force (Disabled, None, or a target the SDK has no name for) the firmware
// boots its own order, which is reported as a persistent disk boot.
func (d *Driver) GetBootDevice(ctx context.Context, node plugins.Node) (plugins.BootDeviceSetting, error) {
	var boot schemas.Boot
	err := d.call(ctx, node, "get boot device", func(t target) error {
		sys, err := t.system()
		if err == nil {
			boot = sys.Boot
		}
		return err
	})
	if err != nil {
		return plugins.BootDeviceSetting{}, err
	}
	var s plugins.BootDeviceSetting
	for m, rm := range bootModes {
		if rm == boot.BootSourceOverrideMode {
			s.Mode = m
		}
	}
	dev, known := deviceOf(boot.BootSourceOverrideTarget)
	if !known || boot.BootSourceOverrideEnabled == schemas.DisabledBootSourceOverrideEnabled {
		s.Device, s.Persistent = plugins.BootDisk, true
		return s, nil
	}
	s.Device = dev
	s.Persistent = boot.BootSourceOverrideEnabled == schemas.ContinuousBootSourceOverrideEnabled
	return s, nil
}

// SupportedBootDevices implements plugins.SupportedBootDevicesLister: the
// advertised override targets the SDK can name, or all four when the system
// advertises none.
func (d *Driver) SupportedBootDevices(ctx context.Context, node plugins.Node) ([]plugins.BootDevice, error) {
	var out []plugins.BootDevice
	err := d.call(ctx, node, "supported boot devices", func(t target) error {
		sys, err := t.system()
		if err != nil {
			return err
		}
		out = supportedDevices(sys)
		return nil
	})
	return out, err
}

func supportedDevices(sys *schemas.ComputerSystem) []plugins.BootDevice {
	allowed := sys.Boot.AllowableBootSourceOverrideTargetValues
	var out []plugins.BootDevice
	for _, b := range bootSources {
		if len(allowed) == 0 || slices.Contains(allowed, b.source) {
			out = append(out, b.device)
		}
	}
	return out
}

// SetBootDevice implements plugins.BootDeviceSetter. It PATCHes a fresh
// Boot holding only the override target, Once or Continuous, and the mode
// when one is asked for; re-sending the Boot read from the system would
// send BootOrder and more, which some BMCs refuse. A 412 (an ETag gone
// stale between the read and the PATCH) is answered by reading the system
// again and trying once more.
func (d *Driver) SetBootDevice(ctx context.Context, node plugins.Node, setting plugins.BootDeviceSetting) error {
	return d.call(ctx, node, "set boot device", func(t target) error {
		return setBoot(t, setting)
	})
}

func setBoot(t target, setting plugins.BootDeviceSetting) error {
	src, ok := sourceOf(setting.Device)
	if !ok {
		return fmt.Errorf("boot device %q: %w", setting.Device, plugins.ErrNotSupported)
	}
	boot := &schemas.Boot{
		BootSourceOverrideTarget:  src,
		BootSourceOverrideEnabled: schemas.OnceBootSourceOverrideEnabled,
	}
	if setting.Persistent {
		boot.BootSourceOverrideEnabled = schemas.ContinuousBootSourceOverrideEnabled
	}
	if setting.Mode != plugins.BootModeUnknown {
		m, ok := bootModes[setting.Mode]
		if !ok {
			return fmt.Errorf("boot mode %q: %w", setting.Mode, plugins.ErrNotSupported)
		}
		boot.BootSourceOverrideMode = m
	}
	for attempt := 0; ; attempt++ {
		sys, err := t.system()
		if err != nil {
			return err
		}
		if !slices.Contains(supportedDevices(sys), setting.Device) {
			return fmt.Errorf("boot device %q: the system does not offer %s: %w", setting.Device, src, plugins.ErrNotSupported)
		}
		err = sys.SetBoot(boot)
		if attempt == 0 && schemas.Is412PreconditionFailed(err) {
			t.logger.Info("stale ETag setting the boot device; reading the system again")
			continue
		}
		return err
	}
}

// InjectNMI implements plugins.NMIInjector with ResetType Nmi. A system
// that does not advertise Nmi answers ErrNotSupported: the plugin's nmi
// capability is per driver (Describe does no I/O), so the per-system
// answer comes here. So does a BMC that refuses the action (400, 405, 409
// such as ResourceInStandby on a powered-off system, 501): the error names
// its answer, and the API gives the client a 400 rather than a 500.
func (d *Driver) InjectNMI(ctx context.Context, node plugins.Node) error {
	return d.call(ctx, node, "inject NMI", func(t target) error {
		sys, err := t.system()
		if err != nil {
			return err
		}
		return nmiRefusal(reset(sys, actNMI))
	})
}

// nmiRefusal turns the BMC's refusal of an NMI into ErrNotSupported,
// keeping its status and message.
func nmiRefusal(err error) error {
	var rf *schemas.Error
	if !errors.As(err, &rf) {
		return err
	}
	switch rf.HTTPReturnedStatusCode {
	case http.StatusBadRequest, http.StatusMethodNotAllowed, http.StatusConflict, http.StatusNotImplemented:
		return fmt.Errorf("the BMC refused the NMI (HTTP %d %s: %s): %w",
			rf.HTTPReturnedStatusCode, messageID(rf), firstMessage(rf), plugins.ErrNotSupported)
	}
	return err
}
