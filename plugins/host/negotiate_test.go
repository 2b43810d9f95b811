package host_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// TestNegotiationMatrix starts the real test plugin serving various protocol
// majors against hosts offering {1} and {1,2}: the highest common major is
// used, or the plugin is refused with both ranges in the error and the log
// while the host keeps serving its other plugins.
func TestNegotiationMatrix(t *testing.T) {
	tests := map[string]struct {
		host, plugin string
		want         int // 0: refused
	}{
		"host 1, plugin 1":     {"1", "1", 1},
		"host 1, plugin 2":     {"1", "2", 0},
		"host 1, plugin 1,2":   {"1", "1,2", 1},
		"host 1, plugin 3":     {"1", "3", 0},
		"host 1,2, plugin 1":   {"1,2", "1", 1},
		"host 1,2, plugin 2":   {"1,2", "2", 2},
		"host 1,2, plugin 1,2": {"1,2", "1,2", 2},
		"host 1,2, plugin 3":   {"1,2", "3", 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			log, logs := newLog(slog.LevelInfo)
			m, err := host.New(host.Config{
				Logger:        log,
				Protocols:     ints(tc.host),
				WatchInterval: -1,
				BuiltIn: map[string]host.Command{
					"test": {Path: testPluginBin, Env: []string{"RIVET_TESTPLUGIN_PROTOCOLS=" + tc.plugin}},
					// A healthy second plugin proves the host keeps going.
					"healthy": {Path: testPluginBin, Env: []string{"RIVET_TESTPLUGIN_PROTOCOLS=1"}},
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := m.Start(ctx); err != nil {
				t.Fatalf("Start: %v (a refused plugin must not fail the host)", err)
			}
			regs := map[string]host.Registration{}
			for _, r := range m.Registrations() {
				regs[r.Driver] = r
			}
			if _, ok := regs["healthy"]; !ok {
				t.Errorf("healthy plugin not registered: %v", m.Refused())
			}
			// Both serve test-hardware; the first registered (by driver name)
			// keeps it, whatever happens to the other.
			if r := m.ByHardwareType()["test-hardware"]; r.Driver != "healthy" {
				t.Errorf("test-hardware recorded as served by %q, want healthy", r.Driver)
			}
			if tc.want != 0 {
				r, ok := regs["test"]
				if !ok {
					t.Fatalf("refused: %v", m.Refused()["test"])
				}
				if r.Protocol != tc.want {
					t.Errorf("protocol %d, want %d", r.Protocol, tc.want)
				}
				// The test plugin serves power 1 and 2; version 2 exists
				// only from protocol 2 on.
				if want := min(tc.want, 2); r.Interfaces[plugins.InterfacePower] != want {
					t.Errorf("power interface version %d under protocol %d, want %d", r.Interfaces[plugins.InterfacePower], tc.want, want)
				}
				return
			}
			if _, ok := regs["test"]; ok {
				t.Fatal("plugin registered, want refused")
			}
			refused := m.Refused()["test"]
			var inc *host.IncompatibleError
			if !errors.As(refused, &inc) {
				t.Fatalf("refusal %v, want *host.IncompatibleError", refused)
			}
			if fmt.Sprint(inc.Host) != fmt.Sprint(ints(tc.host)) || fmt.Sprint(inc.Plugin) != fmt.Sprint(ints(tc.plugin)) {
				t.Errorf("ranges host %v plugin %v, want %v and %v", inc.Host, inc.Plugin, ints(tc.host), ints(tc.plugin))
			}
			wantText := fmt.Sprintf("host speaks %v, plugin speaks %v", ints(tc.host), ints(tc.plugin))
			if !strings.Contains(logs.String(), wantText) {
				t.Errorf("log lacks %q:\n%s", wantText, logs)
			}
		})
	}
}

// TestInterfaceNegotiation checks the in-band level: the host picks the
// highest common version per interface, drops interfaces without overlap
// (answering ErrNotSupported without a call) and refuses a plugin with no
// interface in common.
func TestInterfaceNegotiation(t *testing.T) {
	tests := map[string]struct {
		host      map[plugins.Interface][]int
		protocols []int // nil: the SDK's
		wantPower int   // 0: power not negotiated
		refused   bool
	}{
		"common version 1":       {host: map[plugins.Interface][]int{plugins.InterfacePower: {1}}, wantPower: 1},
		"highest common":         {host: map[plugins.Interface][]int{plugins.InterfacePower: {1, 2}}, wantPower: 2},
		"no power overlap":       {host: map[plugins.Interface][]int{plugins.InterfacePower: {3}}, refused: true},
		"host lacks the iface":   {host: map[plugins.Interface][]int{plugins.InterfaceInspect: {1}}, refused: true},
		"power among many":       {host: plugins.InterfaceVersions(), wantPower: 2},
		"protocol 1 caps power":  {host: plugins.InterfaceVersions(), protocols: []int{1}, wantPower: 1},
		"power 2 needs proto 2":  {host: map[plugins.Interface][]int{plugins.InterfacePower: {2}}, protocols: []int{1}, refused: true},
		"power 2 with proto 1,2": {host: map[plugins.Interface][]int{plugins.InterfacePower: {2}}, protocols: []int{1, 2}, wantPower: 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			log, _ := newLog(slog.LevelInfo)
			m, err := host.New(host.Config{Logger: log, Interfaces: tc.host, Protocols: tc.protocols, WatchInterval: -1,
				BuiltIn: map[string]host.Command{"test": {Path: testPluginBin}}})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if err := m.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			regs := m.Registrations()
			if tc.refused {
				if len(regs) != 0 || !errors.Is(m.Refused()["test"], host.ErrIncompatible) {
					t.Fatalf("registrations %v, refusal %v; want refused as incompatible", regs, m.Refused()["test"])
				}
				return
			}
			if len(regs) != 1 || regs[0].Interfaces[plugins.InterfacePower] != tc.wantPower {
				t.Fatalf("registrations %+v, want power %d", regs, tc.wantPower)
			}
			if got := m.ByHardwareType()["test-hardware"].Interfaces[plugins.InterfacePower]; got != tc.wantPower {
				t.Errorf("recorded power version for test-hardware %d, want %d", got, tc.wantPower)
			}
			d, err := m.Driver("test-hardware")
			if err != nil {
				t.Fatal(err)
			}
			// The test plugin serves no management interface: the host
			// answers without a round trip.
			if _, err := d.GetBootDevice(context.Background(), plugins.Node{UUID: "n1"}); !errors.Is(err, plugins.ErrNotSupported) {
				t.Errorf("GetBootDevice: %v, want ErrNotSupported", err)
			}
		})
	}
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		var v int
		fmt.Sscan(f, &v)
		out = append(out, v)
	}
	return out
}
