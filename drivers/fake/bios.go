package fake

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/plugins"
)

// The fake bios and firmware interfaces (Ironic's fake bios interface,
// plus a fake firmware one): settings and versions live in memory, apply at
// once and need no reboot.

var (
	_ plugins.BIOSInterface     = (*Driver)(nil)
	_ plugins.FirmwareInterface = (*Driver)(nil)
)

// fakeBIOS is every node's BIOS registry and defaults.
var fakeBIOS = []plugins.BIOSSetting{
	{Name: "BootMode", Value: ptr("Uefi"), AttributeType: "Enumeration", AllowableValues: []string{"Uefi", "Bios"}, ResetRequired: ptr(true)},
	{Name: "ProcVirtualization", Value: ptr("Enabled"), AttributeType: "Enumeration", AllowableValues: []string{"Enabled", "Disabled"}, ResetRequired: ptr(true)},
	{Name: "ProcCoreDisable", Value: ptr("0"), AttributeType: "Integer", LowerBound: ptr[int64](0), UpperBound: ptr[int64](32), ResetRequired: ptr(true)},
	{Name: "AdminPhone", Value: ptr(""), AttributeType: "String", MinLength: ptr[int64](0), MaxLength: ptr[int64](32), ReadOnly: ptr(false)},
}

// fakeFirmware is every node's components at their default versions.
var fakeFirmware = map[string]string{"bios": "1.0.0", "bmc": "1.0.0"}

func ptr[T any](v T) *T { return &v }

// GetBIOSSettings implements plugins.BIOSInterface.
func (d *Driver) GetBIOSSettings(_ context.Context, node plugins.Node) ([]plugins.BIOSSetting, error) {
	var out []plugins.BIOSSetting
	err := d.with(node, "get BIOS settings", func(s *nodeState) error {
		for _, def := range fakeBIOS {
			st := def
			if v, ok := s.bios[def.Name]; ok {
				st.Value = ptr(v)
			}
			out = append(out, st)
		}
		return nil
	})
	return out, err
}

// ApplyBIOSSettings implements plugins.BIOSInterface: every setting must
// exist and take the value (an Enumeration's allowable values); nothing
// changes unless all do.
func (d *Driver) ApplyBIOSSettings(_ context.Context, node plugins.Node, settings []plugins.BIOSSettingValue) error {
	return d.with(node, "apply BIOS settings", func(s *nodeState) error {
		next := maps.Clone(s.bios)
		if next == nil {
			next = map[string]string{}
		}
		for _, st := range settings {
			i := slices.IndexFunc(fakeBIOS, func(b plugins.BIOSSetting) bool { return b.Name == st.Name })
			if i < 0 {
				return fmt.Errorf("the BIOS has no setting %s: %w", st.Name, plugins.ErrNotSupported)
			}
			if av := fakeBIOS[i].AllowableValues; len(av) > 0 && !slices.Contains(av, st.Value) {
				return fmt.Errorf("BIOS setting %s takes one of %s, not %q: %w", st.Name, strings.Join(av, ", "), st.Value, plugins.ErrNotSupported)
			}
			next[st.Name] = st.Value
		}
		s.bios = next
		return nil
	})
}

// FactoryResetBIOS implements plugins.BIOSInterface.
func (d *Driver) FactoryResetBIOS(_ context.Context, node plugins.Node) error {
	return d.with(node, "factory reset BIOS", func(s *nodeState) error { s.bios = nil; return nil })
}

// ListFirmwareComponents implements plugins.FirmwareInterface.
func (d *Driver) ListFirmwareComponents(_ context.Context, node plugins.Node) ([]plugins.FirmwareComponent, error) {
	var out []plugins.FirmwareComponent
	err := d.with(node, "list firmware components", func(s *nodeState) error {
		for _, c := range slices.Sorted(maps.Keys(fakeFirmware)) {
			v := fakeFirmware[c]
			if fv, ok := s.firmware[c]; ok {
				v = fv
			}
			out = append(out, plugins.FirmwareComponent{Component: c, CurrentVersion: v})
		}
		return nil
	})
	return out, err
}

// UpdateFirmware implements plugins.FirmwareInterface: the new version is
// the image file name's part after its last '-' without the extension
// ("bios-2.0.bin" installs 2.0), in force at once.
func (d *Driver) UpdateFirmware(_ context.Context, node plugins.Node, updates []plugins.FirmwareUpdate) error {
	return d.with(node, "update firmware", func(s *nodeState) error {
		next := maps.Clone(s.firmware)
		if next == nil {
			next = map[string]string{}
		}
		for _, u := range updates {
			if _, ok := fakeFirmware[u.Component]; !ok {
				return fmt.Errorf("unknown firmware component %q (bios or bmc): %w", u.Component, plugins.ErrNotSupported)
			}
			p, err := url.Parse(u.URL)
			if err != nil || (p.Scheme != "http" && p.Scheme != "https") {
				return fmt.Errorf("update of %s: the image URL must be http or https: %w", u.Component, plugins.ErrNotSupported)
			}
			base := strings.TrimSuffix(path.Base(p.Path), path.Ext(p.Path))
			i := strings.LastIndex(base, "-")
			if i < 0 || i == len(base)-1 {
				return fmt.Errorf("update of %s: the image name %q carries no version (name-<version>.bin)", u.Component, path.Base(p.Path))
			}
			next[u.Component] = base[i+1:]
		}
		s.firmware = next
		return nil
	})
}
