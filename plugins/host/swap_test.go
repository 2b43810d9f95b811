package host_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// installPlugin copies the test plugin into dir as rivet-driver-test by
// writing a temporary file and renaming it over, as a package manager does.
func installPlugin(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(dir, host.BinaryPrefix+"test")
	src, err := os.Open(testPluginBin)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	tmp, err := os.CreateTemp(dir, ".install-*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(tmp, src); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	if err := os.Rename(tmp.Name(), dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestBinaryReplacedIsSwapped replaces the plugin binary while a slow call
// is in flight: the new binary starts and takes new calls, the in-flight
// call completes on the old process (drain), and the old process then exits,
// all without restarting the host.
func TestBinaryReplacedIsSwapped(t *testing.T) {
	dir := t.TempDir()
	installPlugin(t, dir)
	log, logs := newLog(slog.LevelInfo)
	m, d := startTestHost(t, host.Config{Logger: log, PluginDir: dir, WatchInterval: 20 * time.Millisecond})
	defer m.Close()
	oldPID := pid(t, d)

	errc := make(chan error, 1)
	go func() {
		_, err := d.GetPowerState(context.Background(), plugins.Node{UUID: "n1", DriverInfo: plugins.DriverInfo{"sleep_ms": 700}})
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	installPlugin(t, dir)
	waitFor(t, "new plugin process to take over", func() bool {
		r, ok := d.Registration()
		return ok && r.PID != oldPID
	})
	if _, err := d.GetPowerState(context.Background(), plugins.Node{UUID: "n2"}); err != nil {
		t.Fatalf("call on swapped plugin: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("in-flight call during swap: %v (want it drained, not killed)", err)
	}
	waitFor(t, "old plugin process to exit after drain", func() bool { return processGone(oldPID) })
	if !strings.Contains(logs.String(), "binary changed") {
		t.Errorf("swap not logged:\n%s", logs)
	}
}

// TestChecksumPin starts a pinned plugin with the right and a wrong sha256.
func TestChecksumPin(t *testing.T) {
	body, err := os.ReadFile(testPluginBin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	good := hex.EncodeToString(sum[:])
	bad := strings.Repeat("0", 64)
	tests := map[string]struct {
		checksum string
		wantErr  error
	}{
		"matching checksum": {good, nil},
		"other checksum":    {bad, plugin.ErrChecksumsDoNotMatch},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			log, _ := newLog(slog.LevelInfo)
			m, err := host.New(host.Config{Logger: log, WatchInterval: -1,
				BuiltIn:   map[string]host.Command{"test": {Path: testPluginBin}},
				Checksums: map[string]string{"test": tc.checksum}})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if err := m.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			refused := m.Refused()["test"]
			if tc.wantErr == nil {
				regs := m.Registrations()
				if refused != nil || len(regs) != 1 || !regs[0].Pinned {
					t.Fatalf("refused %v, registrations %+v; want one pinned plugin", refused, regs)
				}
				return
			}
			if !errors.Is(refused, tc.wantErr) {
				t.Fatalf("refusal %v, want %v", refused, tc.wantErr)
			}
		})
	}
}

// TestDiscover checks which binary serves each driver.
func TestDiscover(t *testing.T) {
	write := func(dir, name string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/true\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	tests := map[string]struct {
		files   map[string]os.FileMode
		builtIn []string
		want    map[string]bool // driver → served from the plugin dir
	}{
		"built-in only":             {builtIn: []string{"fake"}, want: map[string]bool{"fake": false}},
		"plugin dir only":           {files: map[string]os.FileMode{"rivet-driver-acme": 0o755}, want: map[string]bool{"acme": true}},
		"plugin dir wins":           {files: map[string]os.FileMode{"rivet-driver-fake": 0o755}, builtIn: []string{"fake"}, want: map[string]bool{"fake": true}},
		"not executable is ignored": {files: map[string]os.FileMode{"rivet-driver-fake": 0o644}, builtIn: []string{"fake"}, want: map[string]bool{"fake": false}},
		"other names are ignored":   {files: map[string]os.FileMode{"rivet": 0o755, "rivet-driver-": 0o755, "driver-x": 0o755}, want: map[string]bool{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for f, mode := range tc.files {
				write(dir, f, mode)
			}
			cfg := host.Config{PluginDir: dir, BuiltIn: map[string]host.Command{}}
			for _, b := range tc.builtIn {
				cfg.BuiltIn[b] = host.Command{Path: "/usr/bin/rivet", Args: []string{"plugin", "serve", b}}
			}
			srcs, err := host.Discover(cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, s := range srcs {
				got[s.Driver] = !s.BuiltIn
				if !s.BuiltIn && filepath.Dir(s.Path) != dir {
					t.Errorf("driver %s: path %s outside plugin dir", s.Driver, s.Path)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("drivers %v, want %v", got, tc.want)
			}
			for d, fromDir := range tc.want {
				if got[d] != fromDir {
					t.Errorf("driver %s from plugin dir = %v, want %v", d, got[d], fromDir)
				}
			}
		})
	}
}

// TestRefusedPluginRetriedWhenReplaced puts a broken rivet-driver-test in
// the plugin dir: it is refused, the host runs on, and once a working binary
// replaces it the driver is registered without a host restart.
func TestRefusedPluginRetriedWhenReplaced(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, host.BinaryPrefix+"test"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	log, _ := newLog(slog.LevelInfo)
	m, err := host.New(host.Config{Logger: log, PluginDir: dir, WatchInterval: 20 * time.Millisecond, StartTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m.Refused()["test"] == nil {
		t.Fatal("broken plugin not refused")
	}
	installPlugin(t, dir)
	waitFor(t, "replaced plugin to be registered", func() bool {
		_, err := m.Driver("test-hardware")
		return err == nil
	})
	if m.Refused()["test"] != nil {
		t.Errorf("still listed as refused: %v", m.Refused()["test"])
	}
}
