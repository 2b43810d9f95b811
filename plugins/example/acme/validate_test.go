package acme_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/example/acme"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// TestValidateAndProperties: the example declares its properties and
// validates nodes, across the gRPC boundary and from its real binary.
func TestValidateAndProperties(t *testing.T) {
	bmc := fakeBMC(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	levels := map[string]func(t *testing.T) plugintest.Target{
		"in-process": func(t *testing.T) plugintest.Target { return plugintest.InProcess(t, acme.New(nil, nil)) },
		"subprocess": func(t *testing.T) plugintest.Target {
			return plugintest.Subprocess(t, host.Command{Path: pluginBin}, "acme")
		},
	}
	for name, level := range levels {
		t.Run(name, func(t *testing.T) {
			tgt := level(t)
			if !tgt.Info.Has(plugins.CapabilityValidate) || !tgt.Info.Has(plugins.CapabilityProperties) {
				t.Fatalf("capabilities %v, want validate and properties", tgt.Info.Capabilities)
			}
			v := tgt.Driver.(plugins.Validator)
			for name, tc := range map[string]struct {
				node plugins.Node
				want error
			}{
				"good":         {node(bmc.URL, "pw"), nil},
				"bad password": {node(bmc.URL, "wrong-pw"), plugins.ErrCredentialsRefused},
				"BMC down":     {node(dead.URL, "pw"), plugins.ErrBMCUnreachable},
				"missing keys": {plugins.Node{UUID: "n1", DriverInfo: plugins.DriverInfo{acme.KeyAddress: bmc.URL}}, plugins.ErrInvalidDriverInfo},
			} {
				err := v.Validate(context.Background(), tc.node, plugins.InterfacePower)
				if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
					t.Errorf("%s: Validate = %v, want %v", name, err, tc.want)
				}
			}
			p, ok := tgt.Driver.(interface {
				Properties(context.Context) ([]plugins.Property, error)
			})
			if !ok {
				t.Fatalf("%T has no Properties", tgt.Driver)
			}
			props, err := p.Properties(context.Background())
			if err != nil || len(props) != 3 || props[0].Name != acme.KeyAddress || !props[0].Required {
				t.Fatalf("properties %+v, %v", props, err)
			}
		})
	}
}
