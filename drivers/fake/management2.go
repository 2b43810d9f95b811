package fake

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/plugins"
)

// The fake driver's management interface version 2 keeps everything in
// memory, per node: a new node boots UEFI without secure boot, has a
// system and a chassis indicator (both OFF) and an empty CD and floppy
// slot.

var _ plugins.ManagementInterfaceV2 = (*Driver)(nil)

// fakeIndicators are every node's indicators.
var fakeIndicators = []plugins.Indicator{
	{Component: plugins.ComponentSystem, Name: "led", States: []plugins.IndicatorState{plugins.IndicatorOff, plugins.IndicatorOn, plugins.IndicatorBlinking}},
	{Component: plugins.ComponentChassis, Name: "led", States: []plugins.IndicatorState{plugins.IndicatorOff, plugins.IndicatorOn}},
}

func (s *nodeState) init2() {
	if s.bootMode == "" {
		s.bootMode = plugins.BootModeUEFI
	}
	if s.indicators == nil {
		s.indicators = map[string]plugins.IndicatorState{}
		for _, in := range fakeIndicators {
			s.indicators[in.Name+"@"+in.Component] = plugins.IndicatorOff
		}
	}
	if s.media == nil {
		s.media = map[plugins.VirtualMediaDevice]string{plugins.VirtualMediaCDROM: "", plugins.VirtualMediaFloppy: ""}
	}
}

// GetBootMode implements plugins.BootModeManager.
func (d *Driver) GetBootMode(_ context.Context, node plugins.Node) (m plugins.BootMode, err error) {
	err = d.with(node, "get boot mode", func(s *nodeState) error {
		s.init2()
		m = s.bootMode
		return nil
	})
	return m, err
}

// SetBootMode implements plugins.BootModeManager. Legacy BIOS with secure
// boot on is refused, as firmware refuses it.
func (d *Driver) SetBootMode(_ context.Context, node plugins.Node, mode plugins.BootMode) error {
	return d.with(node, "set boot mode", func(s *nodeState) error {
		s.init2()
		if _, err := plugins.ParseTargetBootMode(string(mode)); err != nil {
			return fmt.Errorf("%v: %w", err, plugins.ErrNotSupported)
		}
		if mode == plugins.BootModeBIOS && s.secureBoot {
			return fmt.Errorf("legacy BIOS boot with secure boot enabled: disable secure boot first: %w", plugins.ErrNotSupported)
		}
		s.bootMode = mode
		return nil
	})
}

// GetSecureBoot implements plugins.BootModeManager.
func (d *Driver) GetSecureBoot(_ context.Context, node plugins.Node) (on bool, err error) {
	err = d.with(node, "get secure boot", func(s *nodeState) error {
		on = s.secureBoot
		return nil
	})
	return on, err
}

// SetSecureBoot implements plugins.BootModeManager: secure boot needs UEFI.
func (d *Driver) SetSecureBoot(_ context.Context, node plugins.Node, enabled bool) error {
	return d.with(node, "set secure boot", func(s *nodeState) error {
		s.init2()
		if enabled && s.bootMode != plugins.BootModeUEFI {
			return fmt.Errorf("secure boot needs UEFI boot mode (the node boots %s): %w", s.bootMode, plugins.ErrNotSupported)
		}
		s.secureBoot = enabled
		return nil
	})
}

// SupportedIndicators implements plugins.IndicatorManager.
func (d *Driver) SupportedIndicators(_ context.Context, node plugins.Node) ([]plugins.Indicator, error) {
	out := make([]plugins.Indicator, len(fakeIndicators))
	for i, in := range fakeIndicators {
		in.States = slices.Clone(in.States)
		out[i] = in
	}
	return out, d.with(node, "list indicators", func(*nodeState) error { return nil })
}

func findIndicator(component, name string) (plugins.Indicator, error) {
	for _, in := range fakeIndicators {
		if in.Component == component && in.Name == name {
			return in, nil
		}
	}
	return plugins.Indicator{}, fmt.Errorf("no indicator %s on component %s: %w", name, component, plugins.ErrNotSupported)
}

// GetIndicatorState implements plugins.IndicatorManager.
func (d *Driver) GetIndicatorState(_ context.Context, node plugins.Node, component, name string) (st plugins.IndicatorState, err error) {
	err = d.with(node, "get indicator state", func(s *nodeState) error {
		if _, err := findIndicator(component, name); err != nil {
			return err
		}
		s.init2()
		st = s.indicators[name+"@"+component]
		return nil
	})
	return st, err
}

// SetIndicatorState implements plugins.IndicatorManager.
func (d *Driver) SetIndicatorState(_ context.Context, node plugins.Node, component, name string, state plugins.IndicatorState) error {
	return d.with(node, "set indicator state", func(s *nodeState) error {
		in, err := findIndicator(component, name)
		if err != nil {
			return err
		}
		if !slices.Contains(in.States, state) {
			return fmt.Errorf("indicator %s@%s cannot be %s: %w", name, component, state, plugins.ErrNotSupported)
		}
		s.init2()
		s.indicators[name+"@"+component] = state
		return nil
	})
}

// GetVirtualMedia implements plugins.VirtualMediaManager.
func (d *Driver) GetVirtualMedia(_ context.Context, node plugins.Node) (out []plugins.VirtualMedia, err error) {
	err = d.with(node, "get virtual media", func(s *nodeState) error {
		s.init2()
		for _, dev := range []plugins.VirtualMediaDevice{plugins.VirtualMediaCDROM, plugins.VirtualMediaFloppy} {
			img := s.media[dev]
			out = append(out, plugins.VirtualMedia{Device: dev, MediaTypes: []string{fakeMediaType[dev]}, Inserted: img != "", Image: img})
		}
		return nil
	})
	return out, err
}

var fakeMediaType = map[plugins.VirtualMediaDevice]string{plugins.VirtualMediaCDROM: "CD", plugins.VirtualMediaFloppy: "Floppy"}

// AttachVirtualMedia implements plugins.VirtualMediaManager: a CD or
// floppy slot takes the image, replacing what it held.
func (d *Driver) AttachVirtualMedia(_ context.Context, node plugins.Node, device plugins.VirtualMediaDevice, imageURL string) error {
	return d.with(node, "attach virtual media", func(s *nodeState) error {
		s.init2()
		if _, ok := s.media[device]; !ok {
			return fmt.Errorf("no %s virtual media slot: %w", device, plugins.ErrNotSupported)
		}
		if !strings.Contains(imageURL, "://") {
			return fmt.Errorf("image %q is not a URL: %w", imageURL, plugins.ErrNotSupported)
		}
		s.media[device] = imageURL
		return nil
	})
}

// DetachVirtualMedia implements plugins.VirtualMediaManager.
func (d *Driver) DetachVirtualMedia(_ context.Context, node plugins.Node, devices []plugins.VirtualMediaDevice) error {
	return d.with(node, "detach virtual media", func(s *nodeState) error {
		s.init2()
		for dev := range s.media {
			if len(devices) == 0 || slices.Contains(devices, dev) {
				s.media[dev] = ""
			}
		}
		return nil
	})
}
