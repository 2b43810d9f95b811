package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/config"
)

func TestDevRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	tests := map[string]struct {
		args []string
		want string
	}{
		"bad listen":       {[]string{"--listen", "6385"}, "--listen \"6385\": want host:port"},
		"bad port":         {[]string{"--listen", "127.0.0.1:99999"}, "port must be 1 to 65535"},
		"negative systems": {[]string{"--sim-nodes", "-1"}, "--sim-nodes -1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := runCLI(t, append([]string{"dev", "--state-dir", dir}, tc.args...)...)
			if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line with %q", code, errOut, tc.want)
			}
		})
	}
}

// TestDevHonoursEnabledHardwareTypes: rivet dev takes the enabled hardware
// types from the config file and the environment, adds each
// --enable-driver, and takes --plugin-dir; on 9b9faca it always set
// fake-hardware, ipmi, redfish whatever the configuration said.
func TestDevHonoursEnabledHardwareTypes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "rivet.conf")
	if err := os.WriteFile(file, []byte("[conductor]\nenabled_hardware_types = fake-hardware,redfish\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	plugins := t.TempDir()
	for name, tc := range map[string]struct {
		files  []string
		env    []string
		opts   devOptions
		want   []string
		errHas string
	}{
		"default":         {want: []string{"fake-hardware", "ipmi", "redfish"}},
		"config file":     {files: []string{file}, want: []string{"fake-hardware", "redfish"}},
		"environment":     {files: []string{file}, env: []string{"RIVET_CONDUCTOR_ENABLED_HARDWARE_TYPES=fake-hardware"}, want: []string{"fake-hardware"}},
		"enable-driver":   {files: []string{file}, opts: devOptions{enableDrivers: []string{"acme-hardware", "redfish"}}, want: []string{"fake-hardware", "redfish", "acme-hardware"}},
		"bad driver name": {opts: devOptions{enableDrivers: []string{"Acme Hardware"}}, errHas: `--enable-driver "Acme Hardware"`},
		"plugin dir":      {opts: devOptions{pluginDir: plugins}, want: []string{"fake-hardware", "ipmi", "redfish"}},
		"plugin dir gone": {opts: devOptions{pluginDir: filepath.Join(plugins, "nope")}, errHas: "--plugin-dir"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := config.Load(tc.files, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			o := tc.opts
			o.stateDir, o.listen = filepath.Join(dir, "state-"+strings.ReplaceAll(name, " ", "-")), "127.0.0.1:6385"
			err = o.apply(cfg)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("apply: %v, want an error with %q", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Conductor.EnabledHardwareTypes; !slices.Equal(got, tc.want) {
				t.Errorf("enabled_hardware_types %v, want %v", got, tc.want)
			}
			if o.pluginDir != "" && cfg.Conductor.PluginDir != o.pluginDir {
				t.Errorf("plugin_dir %q, want %q", cfg.Conductor.PluginDir, o.pluginDir)
			}
		})
	}
}

// TestDevSimListenMovesOffABusyDefault is issue 31's `rivet dev` failing
// when 6386 is taken: the default address moves to a free port and says
// so; an address the user gave still fails, naming the flag.
func TestDevSimListenMovesOffABusyDefault(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	var out strings.Builder
	ln, err := listenSim(devOptions{simListen: busy.Addr().String()}, &out)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if ln.Addr().String() == busy.Addr().String() {
		t.Fatal("listened on the busy address")
	}
	want := fmt.Sprintf("rivet dev: %s is in use; the Redfish simulator listens on %s instead (--sim-listen chooses)\n", busy.Addr(), ln.Addr())
	if out.String() != want {
		t.Errorf("said %q, want %q", out.String(), want)
	}
	_, err = listenSim(devOptions{simListen: busy.Addr().String(), simListenGiven: true}, &out)
	if err == nil || !strings.Contains(err.Error(), "--sim-listen "+busy.Addr().String()) || !strings.Contains(err.Error(), "choose another address with --sim-listen") {
		t.Errorf("given address in use: %v", err)
	}
}

// rivet dev sets its GC percentage unless the operator set GOGC (even to
// an empty value, which the runtime reads as 100).
func TestDevGCPercent(t *testing.T) {
	tests := map[string]struct {
		env     map[string]string
		wantPct int
		wantSet bool
	}{
		"GOGC unset":    {env: map[string]string{"GOMAXPROCS": "2"}, wantPct: devGOGC, wantSet: true},
		"GOGC=100":      {env: map[string]string{"GOGC": "100"}},
		"GOGC=off":      {env: map[string]string{"GOGC": "off"}},
		"GOGC empty":    {env: map[string]string{"GOGC": ""}},
		"no env at all": {env: nil, wantPct: devGOGC, wantSet: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pct, set := devGCPercent(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if pct != tc.wantPct || set != tc.wantSet {
				t.Errorf("devGCPercent = %d, %v; want %d, %v", pct, set, tc.wantPct, tc.wantSet)
			}
		})
	}
	if devGOGC <= 100 {
		t.Errorf("devGOGC = %d: not above Go's default", devGOGC)
	}
}
