package plugintest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/plugins"
)

// managementV2 checks management interface version 2 where it was
// negotiated (and, remotely, that it answers ErrNotSupported where it was
// not). It changes nothing it does not restore: the boot mode is set to
// each mode and back, secure boot to its current value; indicators and
// virtual media are only read. A part the hardware does not have
// (ErrNotSupported) is skipped, never a failure.
func (s *suite) managementV2(t *testing.T) {
	d, has := s.tgt.Driver.(plugins.ManagementInterfaceV2)
	if !has {
		t.Skip("management interface version 2 not implemented")
	}
	c := ctx(t)
	if !slices.Contains(s.tgt.Info.Interfaces[plugins.InterfaceManagement], 2) {
		if s.tgt.Remote {
			if _, err := d.GetBootMode(c, s.node); !errors.Is(err, plugins.ErrNotSupported) {
				t.Errorf("management version 2 not negotiated, GetBootMode returned %v, want ErrNotSupported", err)
			}
		}
		t.Skip("management interface version 2 not negotiated")
	}
	supported := func(what string, err error) bool {
		t.Helper()
		if errors.Is(err, plugins.ErrNotSupported) {
			s.noSecret(t, err)
			t.Logf("%s: not supported: %v", what, err)
			return false
		}
		s.check(t, what, err)
		return true
	}

	before, err := d.GetBootMode(c, s.node)
	readable := supported("get boot mode", err)
	if readable && before != plugins.BootModeUnknown && before != plugins.BootModeUEFI && before != plugins.BootModeBIOS {
		t.Errorf("boot mode %q is not uefi, bios or unknown", before)
	}
	for _, mode := range []plugins.BootMode{plugins.BootModeBIOS, plugins.BootModeUEFI} {
		if !supported("set boot mode "+string(mode), d.SetBootMode(c, s.node, mode)) {
			break
		}
		if readable {
			got, err := d.GetBootMode(c, s.node)
			s.check(t, "get boot mode", err)
			if got != mode {
				t.Errorf("boot mode: set %s, read %q", mode, got)
			}
		}
	}
	if readable && before != plugins.BootModeUnknown {
		supported("restore boot mode", d.SetBootMode(c, s.node, before))
	}

	if on, err := d.GetSecureBoot(c, s.node); supported("get secure boot", err) {
		supported("set secure boot unchanged", d.SetSecureBoot(c, s.node, on))
	}

	inds, err := d.SupportedIndicators(c, s.node)
	if supported("supported indicators", err) {
		for _, in := range inds {
			if in.Component == "" || in.Name == "" || strings.Contains(in.Name, "@") || len(in.States) == 0 {
				t.Errorf("indicator %+v: want a component, a name without @ and its states", in)
				continue
			}
			st, err := d.GetIndicatorState(c, s.node, in.Component, in.Name)
			s.check(t, "get indicator "+in.Name+"@"+in.Component, err)
			if _, perr := plugins.ParseIndicatorState(string(st)); perr != nil {
				t.Errorf("indicator %s@%s: %v", in.Name, in.Component, perr)
			}
		}
		if _, err := d.GetIndicatorState(c, s.node, "no-such-component", "x"); !errors.Is(err, plugins.ErrNotSupported) {
			t.Errorf("an unknown indicator answered %v, want ErrNotSupported", err)
		}
	}

	media, err := d.GetVirtualMedia(c, s.node)
	if supported("get virtual media", err) {
		for _, m := range media {
			if strings.Contains(m.Image, SecretMarker) {
				t.Errorf("virtual media image shows a secret: %q", m.Image)
			}
		}
	}
}
