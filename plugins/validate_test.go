package plugins_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// validating is a power driver with Validate and Properties: what it
// answers is chosen per node name.
type validating struct{ recorder }

func (v *validating) Properties() []plugins.Property {
	return []plugins.Property{
		{Name: "v_address", Required: true, Description: "BMC address."},
		{Name: "v_password", Description: "BMC password."},
	}
}

func (v *validating) Validate(_ context.Context, n plugins.Node, iface plugins.Interface) error {
	switch n.Name {
	case "unreachable":
		return fmt.Errorf("bmc 10.0.0.1: %w", plugins.ErrBMCUnreachable)
	case "refused":
		return fmt.Errorf("bmc 10.0.0.1 said 401: %w", plugins.ErrCredentialsRefused)
	case "system":
		return fmt.Errorf("no /redfish/v1/Systems/9: %w", plugins.ErrWrongSystemID)
	case "keys":
		return &plugins.InvalidDriverInfoError{Missing: []string{"v_address"}, Invalid: []string{"v_port"}}
	case "image":
		return &plugins.InvalidInstanceInfoError{Invalid: []string{"boot_iso"}}
	case "other":
		return errors.New("the BMC is in a bad mood")
	case "iface":
		if iface != plugins.InterfaceManagement {
			return fmt.Errorf("asked for %s", iface)
		}
	}
	return nil
}

// TestValidationOverGRPC: Validate's problem, reason and keys, and the
// declared properties, cross the plugin boundary at every protocol major.
func TestValidationOverGRPC(t *testing.T) {
	for _, p := range plugins.Protocols() {
		t.Run(fmt.Sprint("protocol ", p), func(t *testing.T) {
			tgt := plugintest.InProcessAt(t, &validating{}, p)
			if !tgt.Info.Has(plugins.CapabilityValidate) || !tgt.Info.Has(plugins.CapabilityProperties) {
				t.Fatalf("capabilities %v, want validate and properties", tgt.Info.Capabilities)
			}
			c := tgt.Driver.(*host.Client)
			props, err := c.Properties(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff((&validating{}).Properties(), props); diff != "" {
				t.Errorf("properties (-want +got):\n%s", diff)
			}
			for name, want := range map[string]struct {
				sentinel error
				problem  plugins.ValidationProblem
			}{
				"ok":          {nil, plugins.ProblemNone},
				"iface":       {nil, plugins.ProblemNone},
				"unreachable": {plugins.ErrBMCUnreachable, plugins.ProblemUnreachable},
				"refused":     {plugins.ErrCredentialsRefused, plugins.ProblemCredentialsRefused},
				"system":      {plugins.ErrWrongSystemID, plugins.ProblemWrongSystemID},
				"keys":        {plugins.ErrInvalidDriverInfo, plugins.ProblemInvalidDriverInfo},
				"image":       {nil, plugins.ProblemInvalidInstanceInfo},
				"other":       {nil, plugins.ProblemOther},
			} {
				err := c.Validate(context.Background(), plugins.Node{UUID: "u", Name: name}, plugins.InterfaceManagement)
				if got := plugins.ClassifyValidation(err); got != want.problem {
					t.Errorf("%s: problem %q (%v), want %q", name, got, err, want.problem)
				}
				if want.sentinel != nil && !errors.Is(err, want.sentinel) {
					t.Errorf("%s: %v is not %v", name, err, want.sentinel)
				}
				if want.problem != plugins.ProblemNone && err.Error() == "" {
					t.Errorf("%s: no reason", name)
				}
				var verr *host.ValidationError
				if name == "keys" && (!errors.As(err, &verr) || !slices.Equal(verr.Missing, []string{"v_address"}) || !slices.Equal(verr.Invalid, []string{"v_port"})) {
					t.Errorf("keys: %#v, want missing v_address, invalid v_port", err)
				}
			}
		})
	}
}

// TestValidationOldPlugin: a driver without Validate and Properties (what
// a plugin built with an older SDK looks like) advertises neither
// capability, and the client answers ErrNotSupported: the host falls back.
func TestValidationOldPlugin(t *testing.T) {
	tgt := plugintest.InProcess(t, &recorder{})
	if tgt.Info.Has(plugins.CapabilityValidate) || tgt.Info.Has(plugins.CapabilityProperties) {
		t.Fatalf("capabilities %v advertise what the driver lacks", tgt.Info.Capabilities)
	}
	c := tgt.Driver.(*host.Client)
	if err := c.Validate(context.Background(), plugins.Node{UUID: "u"}, plugins.InterfacePower); !errors.Is(err, plugins.ErrNotSupported) {
		t.Errorf("Validate: %v, want ErrNotSupported", err)
	}
	if _, err := c.Properties(context.Background()); !errors.Is(err, plugins.ErrNotSupported) {
		t.Errorf("Properties: %v, want ErrNotSupported", err)
	}
}

// TestCheckImageRef: Ironic's image reference forms are accepted, anything
// else refused without repeating the value.
func TestCheckImageRef(t *testing.T) {
	for ref, valid := range map[string]bool{
		"http://images.example/a.iso":                   true,
		"https://u:secret@images.example/a.iso":         true,
		"file:///srv/images/a.iso":                      true,
		"glance://7b0b8a8e-3c4f-4f0e-8d8e-0a1b2c3d4e5f": true,
		"7b0b8a8e-3c4f-4f0e-8d8e-0a1b2c3d4e5f":          true,
		"7b0b8a8e3c4f4f0e8d8e0a1b2c3d4e5f":              true,
		"":                                              false,
		"a.iso":                                         false,
		"images.example/a.iso":                          false,
		"http:///a.iso":                                 false,
		"file://host/a.iso":                             false,
		"file:relative.iso":                             false,
		"ftp://images.example/a.iso":                    false,
		"glance://":                                     false,
		"secret-looking value":                          false,
	} {
		err := plugins.CheckImageRef(ref)
		if (err == nil) != valid {
			t.Errorf("CheckImageRef(%q) = %v, want valid %v", ref, err, valid)
		}
		if err != nil && ref != "" && len(ref) > 4 && strings.Contains(err.Error(), ref) {
			t.Errorf("CheckImageRef(%q) repeats the value: %v", ref, err)
		}
	}
}
