package plugintest

import (
	"context"
	"errors"
	"testing"

	"github.com/rivetmetal/rivet/plugins"
)

// validate checks the Validation capabilities: where validate is
// advertised, the suite's node (which reaches its BMC) is valid for every
// served interface but deploy (whose instance_info the suite does not
// know), and a node without driver_info is invalid driver_info, not a
// crash or an "other" error; where properties is advertised, the list is
// non-empty with unique names. Where they are not advertised, a remote
// level answers ErrNotSupported.
func (s *suite) validate(t *testing.T) {
	c := ctx(t)
	v, isValidator := s.tgt.Driver.(plugins.Validator)
	switch {
	case s.tgt.Info.Has(plugins.CapabilityValidate) && isValidator:
		for _, iface := range []plugins.Interface{plugins.InterfacePower, plugins.InterfaceManagement, plugins.InterfaceInspect} {
			if _, served := s.tgt.Info.Interfaces[iface]; !served {
				continue
			}
			s.check(t, "validate "+string(iface), v.Validate(c, s.node, iface))
		}
		empty := s.node
		empty.DriverInfo = plugins.DriverInfo{}
		err := v.Validate(c, empty, plugins.InterfacePower)
		s.noSecret(t, err)
		if got := plugins.ClassifyValidation(err); got != plugins.ProblemInvalidDriverInfo {
			t.Errorf("validate with no driver_info: %v (%q), want invalid driver_info", err, got)
		}
	case s.tgt.Remote && isValidator:
		if err := v.Validate(c, s.node, plugins.InterfacePower); !errors.Is(err, plugins.ErrNotSupported) {
			t.Errorf("validate not advertised, Validate returned %v, want ErrNotSupported", err)
		}
	}
	props, has, err := properties(c, s.tgt.Driver)
	switch {
	case !has:
	case s.tgt.Info.Has(plugins.CapabilityProperties):
		if err != nil || len(props) == 0 {
			t.Fatalf("properties advertised: %v, %v", props, err)
		}
		seen := map[string]bool{}
		for _, p := range props {
			if p.Name == "" || seen[p.Name] || p.Description == "" {
				t.Errorf("property %+v: want a unique name and a description", p)
			}
			seen[p.Name] = true
		}
	case s.tgt.Remote && !errors.Is(err, plugins.ErrNotSupported):
		t.Errorf("properties not advertised, Properties returned %v, want ErrNotSupported", err)
	}
}

// properties asks d for its properties the way its level offers them.
func properties(ctx context.Context, d any) ([]plugins.Property, bool, error) {
	switch p := d.(type) {
	case interface {
		Properties(context.Context) ([]plugins.Property, error)
	}:
		props, err := p.Properties(ctx)
		return props, true, err
	case plugins.PropertyDeclarer:
		return p.Properties(), true, nil
	}
	return nil, false, nil
}
