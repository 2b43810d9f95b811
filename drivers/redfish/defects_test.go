package redfish_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/drivers/redfish"
	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// TestAutoAuthFallsBackToBasicWithoutSessionService: with redfish_auth_type
// unset (auto), a BMC that has no SessionService is driven with HTTP Basic,
// as Ironic's auto does, instead of failing every call.
func TestAutoAuthFallsBackToBasicWithoutSessionService(t *testing.T) {
	for name, authType := range map[string]string{"unset": "", "auto": redfish.AuthAuto} {
		t.Run(name, func(t *testing.T) {
			b := startSim(t, sim.Options{Quirks: sim.Quirks{NoSessionService: true}})
			n := node(b, "node-0")
			if authType != "" {
				n.DriverInfo[redfish.KeyAuthType] = authType
			}
			d := newDriver(t, testOptions())
			must(t, "set power on", d.SetPowerState(ctx(t), n, plugins.PowerOn))
			got, err := d.GetPowerState(ctx(t), n)
			must(t, "get power", err)
			if got != plugins.PowerOn {
				t.Errorf("power state %q, want %q", got, plugins.PowerOn)
			}
			if b.logins.Load() != 0 {
				t.Errorf("%d logins reached a BMC without sessions", b.logins.Load())
			}
		})
	}
	t.Run("session", func(t *testing.T) {
		b := startSim(t, sim.Options{Quirks: sim.Quirks{NoSessionService: true}})
		n := node(b, "node-0", redfish.KeyAuthType, redfish.AuthSession)
		_, err := newDriver(t, testOptions()).GetPowerState(ctx(t), n)
		noSecret(t, err)
		if err == nil || !strings.Contains(err.Error(), "no session service") {
			t.Errorf("auth type session on a BMC without sessions: %v, want an error saying it has no session service", err)
		}
	})
}

// TestWrongPasswordSaysTheBMCRefused: a password the BMC refuses reads as
// the BMC's refusal, with its address and status, not as a malformed key;
// through gRPC too, and still typed as invalid driver_info.
func TestWrongPasswordSaysTheBMCRefused(t *testing.T) {
	for name, authType := range map[string]string{"session": redfish.AuthSession, "basic": redfish.AuthBasic} {
		for level, target := range map[string]func(*testing.T) plugins.PowerInterface{
			"direct":     func(t *testing.T) plugins.PowerInterface { return newDriver(t, testOptions()) },
			"in-process": func(t *testing.T) plugins.PowerInterface { return inProcessPower(t, newDriver(t, testOptions())) },
		} {
			t.Run(name+"/"+level, func(t *testing.T) {
				b := startSim(t, sim.Options{})
				n := node(b, "node-0", redfish.KeyAuthType, authType, redfish.KeyPassword, "not-the-password")
				_, err := target(t).GetPowerState(ctx(t), n)
				noSecret(t, err)
				want := "the BMC at " + b.URL + " refused the credentials (HTTP 401)"
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("got %v, want it to say %q", err, want)
				}
				var inv *plugins.InvalidDriverInfoError
				if !errors.As(err, &inv) {
					t.Errorf("%v is not an InvalidDriverInfoError", err)
				}
				if strings.Contains(fmt.Sprint(err), "not-the-password") {
					t.Errorf("error leaks the password: %v", err)
				}
			})
		}
	}
}

// inProcessPower is d behind the SDK's gRPC server and client.
func inProcessPower(t *testing.T, d plugins.Driver) plugins.PowerInterface {
	return plugintest.InProcess(t, d).Driver.(plugins.PowerInterface)
}

// TestSchemelessAddressIsHTTPS: redfish_address without a scheme means
// https, as Ironic and the property's help say.
func TestSchemelessAddressIsHTTPS(t *testing.T) {
	s, err := sim.New(sim.Options{Password: password})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(s.Handler())
	t.Cleanup(srv.Close)
	t.Cleanup(func() { _ = s.Close() })
	n := node(&bmcSim{URL: strings.TrimPrefix(srv.URL, "https://")}, "node-0", redfish.KeyVerifyCA, false)
	got, err := newDriver(t, testOptions()).GetPowerState(ctx(t), n)
	must(t, "get power state with a schemeless address", err)
	if got != plugins.PowerOff {
		t.Errorf("power state %q, want %q", got, plugins.PowerOff)
	}
}

// TestNMIRefusedByTheBMC: a BMC that refuses the Nmi reset (409 on a
// powered-off system, 501 where it is not implemented) gives
// ErrNotSupported naming its answer, directly and through gRPC, which the
// conductor answers with a 400 (not a 500).
func TestNMIRefusedByTheBMC(t *testing.T) {
	tests := map[string]struct {
		hook func(*bmcSim)
		want string
	}{
		"409 system off": {want: "the BMC refused the NMI (HTTP 409"},
		"501 not implemented": {hook: func(b *bmcSim) {
			b.intercept = func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/Actions/ComputerSystem.Reset") {
					return false
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotImplemented)
				_, _ = w.Write([]byte(`{"error":{"code":"Base.1.8.ActionNotSupported","message":"Nmi is not implemented"}}`))
				return true
			}
		}, want: "the BMC refused the NMI (HTTP 501 Base.1.8.ActionNotSupported"},
	}
	for name, tc := range tests {
		for level, nmi := range map[string]func(*testing.T) plugins.NMIInjector{
			"direct": func(t *testing.T) plugins.NMIInjector { return newDriver(t, testOptions()) },
			"in-process": func(t *testing.T) plugins.NMIInjector {
				return plugintest.InProcess(t, newDriver(t, testOptions())).Driver.(plugins.NMIInjector)
			},
		} {
			t.Run(name+"/"+level, func(t *testing.T) {
				var hooks []func(*bmcSim)
				if tc.hook != nil {
					hooks = append(hooks, tc.hook)
				}
				b := startSim(t, sim.Options{}, hooks...)
				err := nmi(t).InjectNMI(ctx(t), node(b, "node-0"))
				noSecret(t, err)
				if !errors.Is(err, plugins.ErrNotSupported) || !strings.Contains(fmt.Sprint(err), tc.want) {
					t.Errorf("got %v, want ErrNotSupported saying %q", err, tc.want)
				}
			})
		}
	}
}
