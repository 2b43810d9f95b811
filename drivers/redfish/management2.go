package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/redact"
)

// Management interface version 2 over Redfish: the boot mode is the
// ComputerSystem's Boot.BootSourceOverrideMode, secure boot its SecureBoot
// resource (SecureBootEnable), indicators the IndicatorLED and
// LocationIndicatorActive of the system, its chassis and their drives,
// virtual media the
// slots findMedia finds.

var _ plugins.ManagementInterfaceV2 = (*Driver)(nil)

// refusal turns a BMC's refusal (400, 405, 409, 501) of what into
// ErrNotSupported, keeping its status and message; other errors pass.
func refusal(what string, err error) error {
	var rf *schemas.Error
	if !errors.As(err, &rf) {
		return err
	}
	switch rf.HTTPReturnedStatusCode {
	case http.StatusBadRequest, http.StatusMethodNotAllowed, http.StatusConflict, http.StatusNotImplemented:
		return fmt.Errorf("the BMC refused %s (HTTP %d %s: %s): %w",
			what, rf.HTTPReturnedStatusCode, messageID(rf), firstMessage(rf), plugins.ErrNotSupported)
	}
	return err
}

// GetBootMode implements plugins.BootModeManager: the system's
// BootSourceOverrideMode, BootModeUnknown when it reports none.
func (d *Driver) GetBootMode(ctx context.Context, node plugins.Node) (plugins.BootMode, error) {
	var mode plugins.BootMode
	err := d.call(ctx, node, "get boot mode", func(t target) error {
		sys, err := t.system()
		if err != nil {
			return err
		}
		mode = bootModeOf(sys.Boot.BootSourceOverrideMode)
		return nil
	})
	return mode, err
}

func bootModeOf(m schemas.BootSourceOverrideMode) plugins.BootMode {
	for mode, rm := range bootModes {
		if rm == m {
			return mode
		}
	}
	return plugins.BootModeUnknown
}

// SetBootMode implements plugins.BootModeManager: a PATCH of
// Boot.BootSourceOverrideMode alone; a BMC refusing the mode is
// ErrNotSupported naming its answer. A 412 (stale ETag) is tried once more.
func (d *Driver) SetBootMode(ctx context.Context, node plugins.Node, mode plugins.BootMode) error {
	rm, ok := bootModes[mode]
	if !ok {
		return fmt.Errorf("boot mode %q: %w", mode, plugins.ErrNotSupported)
	}
	return d.call(ctx, node, "set boot mode", func(t target) error {
		for attempt := 0; ; attempt++ {
			sys, err := t.system()
			if err != nil {
				return err
			}
			err = sys.SetBoot(&schemas.Boot{BootSourceOverrideMode: rm})
			if attempt == 0 && schemas.Is412PreconditionFailed(err) {
				continue
			}
			return refusal("the boot mode "+string(mode), err)
		}
	})
}

// secureBoot reads the system's SecureBoot resource; ErrNotSupported when
// the system has none.
func secureBoot(t target) (*schemas.SecureBoot, error) {
	sys, err := t.system()
	if err != nil {
		return nil, err
	}
	sb, err := sys.SecureBoot()
	if err != nil {
		return nil, err
	}
	if sb == nil {
		return nil, fmt.Errorf("the system has no SecureBoot resource: %w", plugins.ErrNotSupported)
	}
	return sb, nil
}

// GetSecureBoot implements plugins.BootModeManager: SecureBootEnable, the
// setting that takes effect on the next boot (SecureBootCurrentBoot is the
// state of the running boot; it follows after a reboot).
func (d *Driver) GetSecureBoot(ctx context.Context, node plugins.Node) (bool, error) {
	var on bool
	err := d.call(ctx, node, "get secure boot", func(t target) error {
		sb, err := secureBoot(t)
		if err == nil {
			on = sb.SecureBootEnable
		}
		return err
	})
	return on, err
}

// SetSecureBoot implements plugins.BootModeManager: a PATCH of
// SecureBootEnable; a BMC that refuses it (legacy boot mode, no keys) is
// ErrNotSupported naming its answer.
func (d *Driver) SetSecureBoot(ctx context.Context, node plugins.Node, enabled bool) error {
	return d.call(ctx, node, "set secure boot", func(t target) error {
		sb, err := secureBoot(t)
		if err != nil {
			return err
		}
		return refusal(fmt.Sprintf("SecureBootEnable=%t", enabled), sb.Patch(sb.ODataID, map[string]any{"SecureBootEnable": enabled}))
	})
}

// indicatorHost is a resource with an indicator: the system, a chassis or
// a drive in one.
type indicatorHost struct {
	component string
	id        string
	odataID   string
	led       schemas.IndicatorLED // "" when the resource has no IndicatorLED
	location  *bool                // nil when it has no LocationIndicatorActive
	patch     func(uri string, payload any) error
}

func (h indicatorHost) indicator() (plugins.Indicator, bool) {
	in := plugins.Indicator{Component: h.component, Name: h.id}
	switch {
	case h.led != "":
		in.States = []plugins.IndicatorState{plugins.IndicatorBlinking, plugins.IndicatorOff, plugins.IndicatorOn}
	case h.location != nil:
		in.States = []plugins.IndicatorState{plugins.IndicatorOff, plugins.IndicatorOn}
	default:
		return in, false
	}
	return in, true
}

func (h indicatorHost) state() plugins.IndicatorState {
	switch h.led {
	case schemas.LitIndicatorLED:
		return plugins.IndicatorOn
	case schemas.BlinkingIndicatorLED:
		return plugins.IndicatorBlinking
	case schemas.OffIndicatorLED:
		return plugins.IndicatorOff
	}
	if h.location != nil {
		if *h.location {
			return plugins.IndicatorOn
		}
		return plugins.IndicatorOff
	}
	return plugins.IndicatorUnknown
}

// set writes state: BLINKING needs IndicatorLED; ON and OFF use
// LocationIndicatorActive when the resource has it (IndicatorLED is
// deprecated in its favour), IndicatorLED otherwise.
func (h indicatorHost) set(state plugins.IndicatorState) error {
	var payload map[string]any
	switch {
	case state == plugins.IndicatorBlinking && h.led != "":
		payload = map[string]any{"IndicatorLED": schemas.BlinkingIndicatorLED}
	case state == plugins.IndicatorBlinking:
		return fmt.Errorf("indicator %s@%s cannot blink (it has only LocationIndicatorActive): %w", h.id, h.component, plugins.ErrNotSupported)
	case h.location != nil:
		payload = map[string]any{"LocationIndicatorActive": state == plugins.IndicatorOn}
	case state == plugins.IndicatorOn:
		payload = map[string]any{"IndicatorLED": schemas.LitIndicatorLED}
	default:
		payload = map[string]any{"IndicatorLED": schemas.OffIndicatorLED}
	}
	return refusal(fmt.Sprintf("indicator %s@%s %s", h.id, h.component, state), h.patch(h.odataID, payload))
}

// indicatorHosts reads the system, its chassis and their drives.
func indicatorHosts(t target) ([]indicatorHost, error) {
	sys, err := t.system()
	if err != nil {
		return nil, err
	}
	hosts := []indicatorHost{{component: plugins.ComponentSystem, id: sys.ID, odataID: sys.ODataID,
		led: sys.IndicatorLED, location: sys.LocationIndicatorActive, patch: sys.Patch}}
	chassis, err := sys.Chassis()
	if err != nil {
		return nil, err
	}
	for _, c := range chassis {
		hosts = append(hosts, indicatorHost{component: plugins.ComponentChassis, id: c.ID, odataID: c.ODataID,
			led: c.IndicatorLED, location: c.LocationIndicatorActive, patch: c.Patch})
	}
	// Drives are best effort: a drive collection the BMC fails to serve, or
	// a drive gofish cannot decode (seen in DMTF's own mockups), leaves the
	// drives out rather than the whole list; a drive two chassis list is
	// listed once.
	seen := map[string]bool{}
	for _, c := range chassis {
		drives, err := c.Drives()
		if err != nil {
			t.logger.Warn("the drives of a chassis could not be read; their indicators are not listed", "chassis", c.ODataID, "error", err)
			continue
		}
		for _, dr := range drives {
			if seen[dr.ODataID] {
				continue
			}
			seen[dr.ODataID] = true
			hosts = append(hosts, indicatorHost{component: plugins.ComponentDrive, id: dr.ID, odataID: dr.ODataID,
				led: dr.IndicatorLED, location: dr.LocationIndicatorActive, patch: dr.Patch})
		}
	}
	return hosts, nil
}

func findIndicatorHost(t target, component, name string) (indicatorHost, error) {
	hosts, err := indicatorHosts(t)
	if err != nil {
		return indicatorHost{}, err
	}
	for _, h := range hosts {
		if h.component == component && h.id == name {
			if _, ok := h.indicator(); ok {
				return h, nil
			}
		}
	}
	return indicatorHost{}, fmt.Errorf("no indicator %s on component %s: %w", name, component, plugins.ErrNotSupported)
}

// SupportedIndicators implements plugins.IndicatorManager: one indicator
// per resource with IndicatorLED or LocationIndicatorActive (the system,
// its chassis, the drives of those), named by the resource's Id.
func (d *Driver) SupportedIndicators(ctx context.Context, node plugins.Node) ([]plugins.Indicator, error) {
	var out []plugins.Indicator
	err := d.call(ctx, node, "list indicators", func(t target) error {
		hosts, err := indicatorHosts(t)
		if err != nil {
			return err
		}
		for _, h := range hosts {
			if in, ok := h.indicator(); ok {
				out = append(out, in)
			}
		}
		return nil
	})
	return out, err
}

// GetIndicatorState implements plugins.IndicatorManager.
func (d *Driver) GetIndicatorState(ctx context.Context, node plugins.Node, component, name string) (plugins.IndicatorState, error) {
	var st plugins.IndicatorState
	err := d.call(ctx, node, "get indicator state", func(t target) error {
		h, err := findIndicatorHost(t, component, name)
		if err == nil {
			st = h.state()
		}
		return err
	})
	return st, err
}

// SetIndicatorState implements plugins.IndicatorManager.
func (d *Driver) SetIndicatorState(ctx context.Context, node plugins.Node, component, name string, state plugins.IndicatorState) error {
	return d.call(ctx, node, "set indicator state", func(t target) error {
		h, err := findIndicatorHost(t, component, name)
		if err != nil {
			return err
		}
		return h.set(state)
	})
}

// mediaTypesOf maps Ironic's virtual media device types to Redfish media
// types, as Ironic's redfish driver (disk is a USB stick).
var mediaTypesOf = map[plugins.VirtualMediaDevice][]schemas.VirtualMediaType{
	plugins.VirtualMediaCDROM:  {schemas.CDVirtualMediaType, schemas.DVDVirtualMediaType},
	plugins.VirtualMediaFloppy: {schemas.FloppyVirtualMediaType},
	plugins.VirtualMediaDisk:   {schemas.USBStickVirtualMediaType},
}

// deviceOfSlot is the device type a slot serves, by mediaTypesOf: CD
// before floppy before disk, so a drive taking floppies and USB sticks is
// the floppy.
func deviceOfSlot(s *schemas.VirtualMedia) plugins.VirtualMediaDevice {
	for _, dev := range []plugins.VirtualMediaDevice{plugins.VirtualMediaCDROM, plugins.VirtualMediaFloppy, plugins.VirtualMediaDisk} {
		for _, mt := range mediaTypesOf[dev] {
			if slices.Contains(s.MediaTypes, mt) {
				return dev
			}
		}
	}
	return ""
}

// systemMedia finds the node's virtual media.
func systemMedia(t target) (media, error) {
	sys, err := t.system()
	if err != nil {
		return media{}, err
	}
	return findMedia(t, sys)
}

// GetVirtualMedia implements plugins.VirtualMediaManager: every slot, its
// image without credentials, in the order of the slots' URIs (gofish reads
// the members concurrently).
func (d *Driver) GetVirtualMedia(ctx context.Context, node plugins.Node) ([]plugins.VirtualMedia, error) {
	var out []plugins.VirtualMedia
	err := d.call(ctx, node, "get virtual media", func(t target) error {
		m, err := systemMedia(t)
		if err != nil {
			return err
		}
		slots := slices.Clone(m.slots)
		slices.SortFunc(slots, func(a, b *schemas.VirtualMedia) int { return strings.Compare(a.ODataID, b.ODataID) })
		for _, s := range slots {
			types := make([]string, len(s.MediaTypes))
			for i, mt := range s.MediaTypes {
				types[i] = string(mt)
			}
			out = append(out, plugins.VirtualMedia{Device: deviceOfSlot(s), MediaTypes: types,
				Inserted: gofish.Deref(s.Inserted), Image: redact.Text(s.Image)})
		}
		return nil
	})
	return out, err
}

// AttachVirtualMedia implements plugins.VirtualMediaManager: the first slot
// of the device type's media types (CD before DVD) is ejected if it holds
// media, then takes imageURL.
func (d *Driver) AttachVirtualMedia(ctx context.Context, node plugins.Node, device plugins.VirtualMediaDevice, imageURL string) error {
	want, ok := mediaTypesOf[device]
	if !ok {
		return fmt.Errorf("virtual media device type %q: %w", device, plugins.ErrNotSupported)
	}
	return d.call(ctx, node, "attach virtual media", func(t target) error {
		m, err := systemMedia(t)
		if err != nil {
			return err
		}
		for _, mt := range want {
			for _, s := range m.slots {
				if !slices.Contains(s.MediaTypes, mt) {
					continue
				}
				if gofish.Deref(s.Inserted) || s.Image != "" {
					if _, err := s.EjectMedia(); err != nil {
						return fmt.Errorf("eject %s: %w", s.ODataID, err)
					}
				}
				return refusal("the image", m.insert(t.c, s, imageURL))
			}
		}
		return fmt.Errorf("no %s virtual media slot (media types %v) under the %s: %w", device, want, m.where, plugins.ErrNotSupported)
	})
}

// DetachVirtualMedia implements plugins.VirtualMediaManager: ejects every
// slot of the device types (every slot when none) that holds media.
func (d *Driver) DetachVirtualMedia(ctx context.Context, node plugins.Node, devices []plugins.VirtualMediaDevice) error {
	return d.call(ctx, node, "detach virtual media", func(t target) error {
		m, err := systemMedia(t)
		if err != nil {
			return err
		}
		for _, s := range m.slots {
			if len(devices) > 0 && !slices.Contains(devices, deviceOfSlot(s)) {
				continue
			}
			if !gofish.Deref(s.Inserted) && s.Image == "" {
				continue
			}
			if _, err := s.EjectMedia(); err != nil {
				return fmt.Errorf("eject %s: %w", s.ODataID, err)
			}
		}
		return nil
	})
}
