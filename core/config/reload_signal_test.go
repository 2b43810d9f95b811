//go:build unix

package config

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/release"
)

// TestReloaderSIGHUP drives Run with real SIGHUPs sent to the test process.
func TestReloaderSIGHUP(t *testing.T) {
	// While any channel is registered, SIGHUP cannot kill the test binary,
	// even if one arrives before Run has registered its own.
	guard := make(chan os.Signal, 8)
	signal.Notify(guard, syscall.SIGHUP)
	defer signal.Stop(guard)

	tb := testReleases(t)
	dir := t.TempDir()
	path := writeConf(t, dir, "rivet.conf", "[DEFAULT]\npin_release_version = anvil\n[api]\nport = 6385\n")
	src := Source{Files: []string{path}, Releases: tb}
	cfg, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	pin, err := cfg.Pin(tb)
	if err != nil {
		t.Fatal(err)
	}
	pinner := release.NewPinner(tb, pin)
	if got := pinner.Effective().Version; got != "0.1" {
		t.Fatalf("effective release at start = %s", got)
	}

	var logs syncBuffer
	r := NewReloader(src, cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	applied := make(chan string, 4)
	r.OnChange("DEFAULT", "pin_release_version", func(c *Config) {
		p, err := c.Pin(tb)
		if err != nil {
			t.Errorf("callback got an invalid pin: %v", err)
			return
		}
		applied <- pinner.Set(p, nil).Version
	})
	r.listening = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v", err)
		}
	}()
	<-r.listening

	hup := func() {
		t.Helper()
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	waitApplied := func(want string) {
		t.Helper()
		select {
		case got := <-applied:
			if got != want {
				t.Fatalf("effective release after SIGHUP = %s, want %s", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no reload applied within 10 s; log:\n%s", logs.String())
		}
	}

	// (a) Unpinning applies without a restart; (b) a port change does not,
	// and is logged as needing one.
	writeConf(t, dir, "rivet.conf", "[DEFAULT]\npin_release_version =\n[api]\nport = 7000\n")
	hup()
	waitApplied(release.HeadKey)
	if got := pinner.Effective().Version; got != release.HeadKey {
		t.Fatalf("Effective() = %s after unpinning", got)
	}
	if !hasLine(logs.String(), "level=WARN", "needs a restart", `option="[api] port"`, "running=6385", "configured=7000") {
		t.Fatalf("port change not logged as needing a restart:\n%s", logs.String())
	}
	if got := r.Current().API.Port; got != 6385 {
		t.Fatalf("running port = %d, want the old 6385", got)
	}

	// (c) An invalid file is logged and the running configuration kept.
	before := r.Current()
	writeConf(t, dir, "rivet.conf", "[DEFAULT]\npin_release_version = ocata\n")
	hup()
	waitFor(t, "the invalid reload to be logged", func() bool {
		return hasLine(logs.String(), "level=ERROR", "keeping the current configuration", "ocata")
	})
	if r.Current() != before || pinner.Effective().Version != release.HeadKey {
		t.Fatalf("invalid reload changed the configuration: pin %q, effective %s",
			r.Current().Default.PinReleaseVersion, pinner.Effective().Version)
	}

	// A fixed file is picked up on the next SIGHUP.
	writeConf(t, dir, "rivet.conf", "[DEFAULT]\npin_release_version = 0.1\n")
	hup()
	waitApplied("0.1")
}
