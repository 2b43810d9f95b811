package conductor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// Handlers of management interface version 2 (RPC 1.5): the boot mode and
// secure boot (REST API 1.76), indicators (1.63) and virtual media (1.89,
// 1.93), as Ironic's ConductorManager change_node_boot_mode,
// change_node_secure_boot, get_supported_indicators, get_indicator_state,
// set_indicator_state, get_virtual_media, attach_virtual_media and
// detach_virtual_media.

// Keys of driver_internal_info where the conductor records what it last
// read or set of the node's boot mode and secure boot; the API shows them
// as the node's boot_mode and secure_boot (1.75).
const (
	diiBootMode   = "boot_mode"
	diiSecureBoot = "secure_boot"
)

// management2 returns hw's management interface version 2, or Ironic's
// UnsupportedDriverExtension (400) for feature: an in-process driver
// without the methods, or a running plugin that negotiated management
// version 1 (the message says so and asks for an upgrade). A plugin not
// running yet is asked, and its handle answers the same itself.
func management2(hw Hardware, driver, feature, doing string) (plugins.ManagementInterfaceV2, error) {
	m, ok := hw.(plugins.ManagementInterfaceV2)
	if !ok {
		return nil, errUnsupported(driver, feature)
	}
	if r, ok := hw.(interface {
		Registration() (host.Registration, bool)
	}); ok {
		if reg, running := r.Registration(); running {
			if v := reg.Interfaces[plugins.InterfaceManagement]; v < 2 {
				err := &host.ManagementVersionError{Op: doing, Version: max(v, 1)}
				return nil, classed("UnsupportedDriverExtension", 400, err, "Driver %s: %s.", driver, err.Error())
			}
		}
	}
	return m, nil
}

// sharedManagement2 is the node p names, without a lease, and its driver's
// management version 2, for reading feature (400 when the driver lacks it).
func (s *Service) sharedManagement2(ctx context.Context, p rpc.Params, feature string) (*objects.Node, plugins.ManagementInterfaceV2, error) {
	n, hw, err := s.sharedNode(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	m, err := management2(hw, n.Driver, feature, feature)
	if err != nil {
		return nil, nil, err
	}
	return n, m, nil
}

// BootModeOf is the boot mode the conductor last recorded for n ("" when
// none).
func BootModeOf(n *objects.Node) plugins.BootMode {
	m, _ := n.DriverInternalInfo[diiBootMode].(string)
	mode, err := plugins.ParseBootMode(m)
	if err != nil {
		return plugins.BootModeUnknown
	}
	return mode
}

// instanceInfoWithBootMode is the instance_info a driver gets: n's, with
// "boot_mode" set to the boot mode the conductor recorded when the user
// did not set one, so the deploy boots the mode the node is in (Ironic's
// boot_mode_utils.get_boot_mode order: instance_info first, then the
// node's boot_mode). n's own map is never changed.
func instanceInfoWithBootMode(n *objects.Node) map[string]any {
	mode := BootModeOf(n)
	if _, set := n.InstanceInfo[diiBootMode]; set || mode == plugins.BootModeUnknown {
		return n.InstanceInfo
	}
	ii := maps.Clone(n.InstanceInfo)
	if ii == nil {
		ii = map[string]any{}
	}
	ii[diiBootMode] = string(mode)
	return ii
}

// recordBootMode stores what was read or set into n's
// driver_internal_info; it reports whether anything changed.
func recordBootMode(n *objects.Node, mode *plugins.BootMode, secure *bool) bool {
	dii := maps.Clone(n.DriverInternalInfo)
	if dii == nil {
		dii = map[string]any{}
	}
	if mode != nil {
		if *mode == plugins.BootModeUnknown {
			delete(dii, diiBootMode)
		} else {
			dii[diiBootMode] = string(*mode)
		}
	}
	if secure != nil {
		dii[diiSecureBoot] = *secure
	}
	if maps.EqualFunc(dii, n.DriverInternalInfo, func(a, b any) bool { return a == b }) && len(dii) == len(n.DriverInternalInfo) {
		return false
	}
	n.DriverInternalInfo = dii
	return true
}

// changeNodeBootMode sets the node's boot mode in the background (Ironic's
// change_node_boot_mode): the value is checked and the node's lease taken
// before the answer; the driver call runs afterwards, skipped when the BMC
// already reports the mode, and the result is recorded as the node's
// boot_mode or its last_error.
func (s *Service) changeNodeBootMode(ctx context.Context, p rpc.Params) (any, error) {
	target, err := p.String("new_state")
	if err != nil {
		return nil, err
	}
	mode, perr := plugins.ParseTargetBootMode(target)
	if perr != nil {
		return nil, errInvalidParameter("Invalid boot mode %s requested for node. Allowed boot modes are: uefi, bios", target)
	}
	return s.management2Work(ctx, p, "changing node boot mode", "boot_mode", "setting the boot mode",
		func(ctx context.Context, t *Task, m plugins.ManagementInterfaceV2) error {
			var current plugins.BootMode
			err := s.driverCall(ctx, t.Node, "get boot mode", func(ctx context.Context, pn plugins.Node) (err error) {
				current, err = m.GetBootMode(ctx, pn)
				return err
			})
			if err == nil && current == mode {
				t.log.Info("the node already boots in the target boot mode; nothing to change", "boot_mode", string(mode))
			} else {
				err = s.driverCall(ctx, t.Node, "set boot mode to "+string(mode), func(ctx context.Context, pn plugins.Node) error {
					return m.SetBootMode(ctx, pn, mode)
				})
				if err != nil {
					return fmt.Errorf("Failed to change boot mode to '%s': %w", mode, err)
				}
			}
			recordBootMode(t.Node, &mode, nil)
			t.log.Info("boot mode changed", "boot_mode", string(mode))
			return nil
		})
}

// changeNodeSecureBoot enables or disables UEFI secure boot in the
// background (Ironic's change_node_secure_boot), as changeNodeBootMode.
func (s *Service) changeNodeSecureBoot(ctx context.Context, p rpc.Params) (any, error) {
	var on bool
	if err := p.Decode("new_state", &on); err != nil {
		return nil, errInvalidParameter("Invalid secure_boot requested for node. Allowed secure_boot states are: True, False")
	}
	return s.management2Work(ctx, p, "changing node secure boot", "secure_boot", "setting the secure boot state",
		func(ctx context.Context, t *Task, m plugins.ManagementInterfaceV2) error {
			var current bool
			err := s.driverCall(ctx, t.Node, "get secure boot state", func(ctx context.Context, pn plugins.Node) (err error) {
				current, err = m.GetSecureBoot(ctx, pn)
				return err
			})
			if err == nil && current == on {
				t.log.Info("secure boot is already in the target state; nothing to change", "secure_boot", on)
			} else {
				err = s.driverCall(ctx, t.Node, fmt.Sprintf("set secure boot to %t", on), func(ctx context.Context, pn plugins.Node) error {
					return m.SetSecureBoot(ctx, pn, on)
				})
				if err != nil {
					return fmt.Errorf("Failed to change secure_boot state to '%t': %w", on, err)
				}
			}
			recordBootMode(t.Node, nil, &on)
			t.log.Info("secure boot changed", "secure_boot", on)
			return nil
		})
}

// management2Work takes the node's lease, checks the driver serves
// management version 2 (400 otherwise, before anything changes), clears
// last_error and runs do in the background; an error of do becomes the
// node's last_error, success saves what do recorded.
func (s *Service) management2Work(ctx context.Context, p rpc.Params, purpose, feature, doing string,
	do func(ctx context.Context, t *Task, m plugins.ManagementInterfaceV2) error) (any, error) {
	t, err := s.acquireParam(ctx, p, purpose)
	if err != nil {
		return nil, err
	}
	hw, err := s.hardware(t.Node)
	if err != nil {
		t.Release(ctx)
		return nil, err
	}
	m, err := management2(hw, t.Node.Driver, feature, doing)
	if err != nil {
		t.Release(ctx)
		return nil, err
	}
	prepare := func() error {
		t.Node.LastError = nil
		return t.Save(ctx)
	}
	work := func(ctx context.Context, t *Task) {
		if err := do(ctx, t, m); err != nil {
			t.Node.LastError = ptr(err.Error())
			t.log.Warn(purpose+" failed", "error", err)
		}
		if serr := t.Save(ctx); serr != nil {
			t.log.Error("recording the result failed", "purpose", purpose, "error", serr)
		}
	}
	return nil, s.startWork(ctx, t, prepare, work)
}

// refreshBootMode reads the boot mode and secure boot from the BMC into
// n's driver_internal_info (Ironic's node_cache_boot_mode); a driver or
// plugin without them, or a failing read, leaves n as it was. It reports
// whether n changed; the caller saves it.
func (s *Service) refreshBootMode(ctx context.Context, n *objects.Node, hw Hardware) bool {
	m, ok := hw.(plugins.ManagementInterfaceV2)
	if !ok {
		return false
	}
	if _, err := management2(hw, n.Driver, "boot_mode", "reading the boot mode"); err != nil {
		return false
	}
	var mode plugins.BootMode
	var modeKnown bool
	err := s.driverCall(ctx, n, "get boot mode", func(ctx context.Context, pn plugins.Node) (err error) {
		mode, err = m.GetBootMode(ctx, pn)
		return err
	})
	modeKnown = err == nil
	var secure bool
	err = s.driverCall(ctx, n, "get secure boot state", func(ctx context.Context, pn plugins.Node) (err error) {
		secure, err = m.GetSecureBoot(ctx, pn)
		return err
	})
	secureKnown := err == nil
	var mp *plugins.BootMode
	var sp *bool
	if modeKnown && mode != plugins.BootModeUnknown {
		mp = &mode
	}
	if secureKnown {
		sp = &secure
	}
	return recordBootMode(n, mp, sp)
}

// cacheBootMode refreshes the node's recorded boot mode and secure boot
// from the BMC while verifying and inspecting it (Ironic's
// node_update_cache); failures only leave the old values.
func (s *Service) cacheBootMode(ctx context.Context, t *Task) {
	hw, err := s.hardware(t.Node)
	if err != nil {
		return
	}
	if s.refreshBootMode(ctx, t.Node, hw) {
		t.log.Info("boot mode recorded", "boot_mode", t.Node.DriverInternalInfo[diiBootMode], "secure_boot", t.Node.DriverInternalInfo[diiSecureBoot])
	}
}

// getSupportedIndicators lists the node's indicators as Ironic's
// get_supported_indicators: {component: {name: {"readonly", "states"}}}.
// No lease.
func (s *Service) getSupportedIndicators(ctx context.Context, p rpc.Params) (any, error) {
	n, m, err := s.sharedManagement2(ctx, p, "indicators")
	if err != nil {
		return nil, err
	}
	inds, err := driverRead(ctx, s, n, "list indicators", func(ctx context.Context, pn plugins.Node) ([]plugins.Indicator, error) {
		return m.SupportedIndicators(ctx, pn)
	})
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]rpc.IndicatorInfo{}
	for _, in := range inds {
		if out[in.Component] == nil {
			out[in.Component] = map[string]rpc.IndicatorInfo{}
		}
		states := make([]string, len(in.States))
		for i, st := range in.States {
			states[i] = string(st)
		}
		out[in.Component][in.Name] = rpc.IndicatorInfo{Readonly: in.Readonly, States: states}
	}
	return out, nil
}

// indicatorParams reads component and indicator.
func indicatorParams(p rpc.Params) (component, name string, err error) {
	if component, err = p.String("component"); err != nil {
		return "", "", err
	}
	if name, err = p.String("indicator"); err != nil {
		return "", "", err
	}
	return component, name, nil
}

// getIndicatorState reads one indicator's state. No lease.
func (s *Service) getIndicatorState(ctx context.Context, p rpc.Params) (any, error) {
	component, name, err := indicatorParams(p)
	if err != nil {
		return nil, err
	}
	n, m, err := s.sharedManagement2(ctx, p, "indicators")
	if err != nil {
		return nil, err
	}
	st, err := driverRead(ctx, s, n, "get indicator "+name+"@"+component, func(ctx context.Context, pn plugins.Node) (plugins.IndicatorState, error) {
		return m.GetIndicatorState(ctx, pn, component, name)
	})
	return string(st), err
}

// setIndicatorState sets one indicator under the node's lease,
// synchronously, as Ironic's set_indicator_state. A state that is not ON,
// OFF or BLINKING is InvalidParameterValue (400).
func (s *Service) setIndicatorState(ctx context.Context, p rpc.Params) (any, error) {
	component, name, err := indicatorParams(p)
	if err != nil {
		return nil, err
	}
	raw, err := p.String("state")
	if err != nil {
		return nil, err
	}
	st, perr := plugins.ParseTargetIndicatorState(raw)
	if perr != nil {
		return nil, errInvalidParameter("Invalid indicator state %s (valid are ON, OFF, BLINKING).", raw)
	}
	return s.leasedCall(ctx, p, "setting indicator state", func(t *Task, hw Hardware) error {
		m, err := management2(hw, t.Node.Driver, "indicators", "indicators")
		if err != nil {
			return err
		}
		return s.driverCallRepeatable(ctx, t.Node, "set indicator "+name+"@"+component+" to "+string(st), func(ctx context.Context, pn plugins.Node) error {
			return m.SetIndicatorState(ctx, pn, component, name, st)
		})
	})
}

// getVirtualMedia lists the node's virtual media slots (Ironic's
// get_virtual_media). No lease.
func (s *Service) getVirtualMedia(ctx context.Context, p rpc.Params) (any, error) {
	n, m, err := s.sharedManagement2(ctx, p, "virtual media")
	if err != nil {
		return nil, err
	}
	media, err := driverRead(ctx, s, n, "get virtual media", func(ctx context.Context, pn plugins.Node) ([]plugins.VirtualMedia, error) {
		return m.GetVirtualMedia(ctx, pn)
	})
	if err != nil {
		return nil, err
	}
	out := make([]rpc.VirtualMedia, 0, len(media))
	for _, vm := range media {
		types := vm.MediaTypes
		if types == nil {
			types = []string{}
		}
		out = append(out, rpc.VirtualMedia{DeviceType: string(vm.Device), MediaTypes: types, Inserted: vm.Inserted, Image: vm.Image})
	}
	return out, nil
}

// attachVirtualMedia inserts an image in the background under the node's
// lease (Ironic's attach_virtual_media); a failure becomes last_error.
// image_download_source "http" and "local" both give the BMC the URL
// itself: Rivet keeps no local copy of virtual media images. "swift" is
// refused (400): Rivet has no object store.
func (s *Service) attachVirtualMedia(ctx context.Context, p rpc.Params) (any, error) {
	raw, err := p.String("device_type")
	if err != nil {
		return nil, err
	}
	dev, perr := plugins.ParseVirtualMediaDevice(raw)
	if perr != nil {
		return nil, errInvalidParameter("Invalid device type(s) %s (valid are disk, cdrom, floppy)", raw)
	}
	url, err := p.String("image_url")
	if err != nil {
		return nil, err
	}
	source := "local"
	if p.Has("image_download_source") {
		if source, err = p.String("image_download_source"); err != nil {
			return nil, err
		}
	}
	switch source {
	case "http", "local":
	case "swift":
		return nil, errInvalidParameter("image_download_source swift is not supported: Rivet has no object store; use http (the BMC fetches image_url itself)")
	default:
		return nil, errInvalidParameter("Invalid image_download_source %s (valid are http, local)", source)
	}
	return s.vmediaWork(ctx, p, "attaching virtual media", func(ctx context.Context, t *Task, m plugins.ManagementInterfaceV2) error {
		err := s.driverCall(ctx, t.Node, "attach virtual media ("+string(dev)+")", func(ctx context.Context, pn plugins.Node) error {
			return m.AttachVirtualMedia(ctx, pn, dev, url)
		})
		if err == nil {
			t.log.Info("virtual media attached", "device_type", string(dev))
		}
		return err
	})
}

// detachVirtualMedia ejects media in the background under the node's lease
// (Ironic's detach_virtual_media): those of device_types, or all.
func (s *Service) detachVirtualMedia(ctx context.Context, p rpc.Params) (any, error) {
	var raw []string
	if err := p.Decode("device_types", &raw); err != nil {
		return nil, err
	}
	var devs []plugins.VirtualMediaDevice
	var invalid []string
	for _, r := range raw {
		d, err := plugins.ParseVirtualMediaDevice(r)
		if err != nil {
			invalid = append(invalid, r)
			continue
		}
		devs = append(devs, d)
	}
	if len(invalid) > 0 {
		return nil, errInvalidParameter("Invalid device type(s) %s (valid are disk, cdrom, floppy)", strings.Join(invalid, ", "))
	}
	return s.vmediaWork(ctx, p, "detaching virtual media", func(ctx context.Context, t *Task, m plugins.ManagementInterfaceV2) error {
		err := s.driverCall(ctx, t.Node, "detach virtual media", func(ctx context.Context, pn plugins.Node) error {
			return m.DetachVirtualMedia(ctx, pn, devs)
		})
		if err == nil {
			t.log.Info("virtual media detached", "device_types", raw)
		}
		return err
	})
}

// vmediaWork is management2Work for virtual media, refused as Ironic's
// TemporaryFailure while the node is in maintenance for a power failure.
func (s *Service) vmediaWork(ctx context.Context, p rpc.Params, purpose string,
	do func(ctx context.Context, t *Task, m plugins.ManagementInterfaceV2) error) (any, error) {
	n, err := s.sharedByParam(ctx, p)
	if err != nil {
		return nil, err
	}
	if n.Maintenance && n.Fault != nil && *n.Fault == "power failure" {
		return nil, classed("TemporaryFailure", 503, errors.New("power failure"),
			"Unable to %s for node %s due to power failure state", purpose, n.UUID)
	}
	return s.management2Work(ctx, p, purpose, "virtual media", "virtual media", do)
}
