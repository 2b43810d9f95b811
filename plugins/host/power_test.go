package host_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// TestPowerActionsByProtocol: the test plugin implements power 2 with
// soft_power. Serving only protocol 1 (as a plugin of the 0.1 SDK does) it
// runs power 1: hard actions work, and soft actions or timeouts are refused
// without a round trip, naming the plugin and what was negotiated. At
// protocol 2 they all work.
func TestPowerActionsByProtocol(t *testing.T) {
	for name, protocols := range map[string]string{"protocol 1": "1", "protocols 1,2": "1,2"} {
		t.Run(name, func(t *testing.T) {
			log, _ := newLog(slog.LevelInfo)
			m, err := host.New(host.Config{Logger: log, WatchInterval: -1,
				BuiltIn: map[string]host.Command{"test": {Path: testPluginBin, Env: []string{"RIVET_TESTPLUGIN_PROTOCOLS=" + protocols}}}})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := m.Start(ctx); err != nil {
				t.Fatal(err)
			}
			d, err := m.Driver("test-hardware")
			if err != nil {
				t.Fatalf("%v (refused: %v)", err, m.Refused())
			}
			v2 := protocols != "1"
			n := plugins.Node{UUID: "n1"}
			power := func(want plugins.PowerState) {
				t.Helper()
				if got, err := d.GetPowerState(ctx, n); err != nil || got != want {
					t.Errorf("power state %q, %v; want %q", got, err, want)
				}
			}
			if err := d.PowerAction(ctx, n, plugins.PowerOn, 0); err != nil {
				t.Fatal(err)
			}
			power(plugins.PowerOn)
			for _, a := range []struct {
				target  plugins.PowerState
				timeout time.Duration
				need    string
			}{
				{plugins.SoftPowerOff, 0, "soft power needs plugin protocol 2"},
				{plugins.SoftRebooting, time.Minute, "soft power needs plugin protocol 2"},
				{plugins.PowerOff, time.Minute, "a power timeout needs plugin protocol 2"},
			} {
				checkErr := d.CheckPowerAction(a.target, a.timeout)
				err := d.PowerAction(ctx, n, a.target, a.timeout)
				if v2 {
					if checkErr != nil || err != nil {
						t.Errorf("%s (timeout %v): check %v, action %v", a.target, a.timeout, checkErr, err)
					}
					power(a.target.Final())
					continue
				}
				want := `driver plugin "test" (version 0.0.1) negotiated plugin protocol 1 and power interface version 1; ` + a.need
				for _, e := range []error{checkErr, err} {
					if !errors.Is(e, plugins.ErrNotSupported) || !strings.Contains(e.Error(), want) {
						t.Errorf("%s (timeout %v): %v, want ErrNotSupported saying %q", a.target, a.timeout, e, want)
					}
				}
				power(plugins.PowerOn)
			}
		})
	}
}
