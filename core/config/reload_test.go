package config

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/logging"
	"github.com/rivetmetal/rivet/core/release"
)

func TestReload(t *testing.T) {
	tb := testReleases(t)
	tests := map[string]struct {
		before, after string
		wantErr       bool
		wantCalls     []string // options whose callbacks ran
		wantLog       [][]string
		notInLog      []string
		check         func(t *testing.T, cur *Config)
	}{
		"reloadable options apply": {
			before:    "[DEFAULT]\npin_release_version = anvil\n",
			after:     "[DEFAULT]\nlog_level = debug\n",
			wantCalls: []string{"pin_release_version", "log_level"},
			wantLog: [][]string{
				{"configuration option reloaded", `option="[DEFAULT] pin_release_version"`, `old="\"anvil\""`, `new="\"\""`},
				{"configuration option reloaded", `option="[DEFAULT] log_level"`},
			},
			check: func(t *testing.T, cur *Config) {
				if cur.Default.PinReleaseVersion != "" || cur.Default.LogLevel != "debug" {
					t.Errorf("current = %+v", cur.Default)
				}
			},
		},
		"other options need a restart": {
			before:   "[api]\nport = 6385\n[json_rpc]\npassword = old-s3cr3t\n[database]\nconnection = postgresql://u:db-s3cr3t@db/rivet\n",
			after:    "[api]\nport = 7000\n[json_rpc]\npassword = new-s3cr3t\n[database]\nconnection = postgresql://u:db-s3cr3t2@db/rivet\n",
			wantLog:  [][]string{{"needs a restart", `option="[api] port"`, "running=6385", "configured=7000"}, {"needs a restart", `option="[json_rpc] password"`}, {"needs a restart", `option="[database] connection"`, "u:******@db"}},
			notInLog: []string{"s3cr3t"},
			check: func(t *testing.T, cur *Config) {
				if cur.API.Port != 6385 || cur.JSONRPC.Password != "old-s3cr3t" {
					t.Errorf("non-reloadable options changed: port %d", cur.API.Port)
				}
			},
		},
		"invalid configuration is kept out": {
			before:   "[DEFAULT]\npin_release_version = anvil\n",
			after:    "[DEFAULT]\npin_release_version = ocata\nlog_level = debug\n[json_rpc]\npassword = s3cr3t\nauth_strategy = none\n",
			wantErr:  true,
			wantLog:  [][]string{{"level=ERROR", "keeping the current configuration", `unknown release \"ocata\"`}},
			notInLog: []string{"s3cr3t"},
			check: func(t *testing.T, cur *Config) {
				if cur.Default.PinReleaseVersion != "anvil" || cur.Default.LogLevel != "info" {
					t.Errorf("current changed: %+v", cur.Default)
				}
			},
		},
		"nothing changed": {before: "[api]\nport = 1\n", after: "[api]\nport = 1\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeConf(t, dir, "rivet.conf", tc.before)
			src := Source{Files: []string{path}, Releases: tb}
			cfg, err := src.Load()
			if err != nil {
				t.Fatal(err)
			}
			var logs syncBuffer
			r := NewReloader(src, cfg, slog.New(slog.NewTextHandler(&logs, nil)))
			var calls []string
			for _, opt := range []string{"pin_release_version", "log_level"} {
				r.OnChange("DEFAULT", opt, func(c *Config) {
					if r.Current() != c {
						t.Errorf("callback for %s sees a configuration that is not current", opt)
					}
					calls = append(calls, opt)
				})
			}
			writeConf(t, dir, "rivet.conf", tc.after)
			if err := r.Reload(); (err != nil) != tc.wantErr {
				t.Fatalf("Reload error = %v", err)
			}
			if diff := cmp.Diff(tc.wantCalls, calls); diff != "" {
				t.Errorf("callbacks (-want +got):\n%s", diff)
			}
			for _, parts := range tc.wantLog {
				if !hasLine(logs.String(), parts...) {
					t.Errorf("no log line with %q in:\n%s", parts, logs.String())
				}
			}
			for _, s := range tc.notInLog {
				if strings.Contains(logs.String(), s) {
					t.Errorf("log contains %q:\n%s", s, logs.String())
				}
			}
			if tc.check != nil {
				tc.check(t, r.Current())
			}
		})
	}
}

// TestReloadWiring shows the intended wiring of the two reloadable options:
// the pin into a release.Pinner, the level into the logger's LevelVar.
func TestReloadWiring(t *testing.T) {
	tb := testReleases(t)
	dir := t.TempDir()
	path := writeConf(t, dir, "rivet.conf", "[DEFAULT]\npin_release_version = 0.1\nlog_level = error\n")
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
	var out syncBuffer
	log, level, err := logging.New(&out, cfg.Default.LogFormat, cfg.Default.LogLevel)
	if err != nil {
		t.Fatal(err)
	}
	r := NewReloader(src, cfg, log)
	r.OnChange("DEFAULT", "pin_release_version", func(c *Config) {
		p, _ := c.Pin(tb) // valid: Reload validated it
		pinner.Set(p, nil)
	})
	r.OnChange("DEFAULT", "log_level", func(c *Config) {
		l, _ := logging.ParseLevel(c.Default.LogLevel)
		level.Set(l)
	})
	writeConf(t, dir, "rivet.conf", "[DEFAULT]\nlog_level = debug\n")
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := pinner.Effective().Version; got != release.HeadKey {
		t.Errorf("effective release after unpinning = %s", got)
	}
	if level.Level() != slog.LevelDebug {
		t.Errorf("level = %v", level.Level())
	}
}

func TestOnChangeRejectsNonReloadable(t *testing.T) {
	r := NewReloader(Source{}, Default(), slog.Default())
	for name, opt := range map[string][2]string{
		"not reloadable": {"api", "port"},
		"not declared":   {"DEFAULT", "nope"},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatalf("OnChange(%q, %q) did not panic", opt[0], opt[1])
				}
			}()
			r.OnChange(opt[0], opt[1], func(*Config) {})
		})
	}
}

// A callback registered with OnChangeOrKeep that refuses the new value
// keeps the running one, so the next reload of the same file retries it.
func TestOnChangeOrKeepRefusal(t *testing.T) {
	tb := testReleases(t)
	dir := t.TempDir()
	path := writeConf(t, dir, "rivet.conf", "[DEFAULT]\npin_release_version = 0.1\n")
	src := Source{Files: []string{path}, Releases: tb}
	cfg, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	log, _, err := logging.New(&out, cfg.Default.LogFormat, "info")
	if err != nil {
		t.Fatal(err)
	}
	r := NewReloader(src, cfg, log)
	refuse, calls := true, 0
	r.OnChangeOrKeep("DEFAULT", "pin_release_version", func(c *Config) error {
		calls++
		if refuse {
			return errors.New("an older service is live")
		}
		return nil
	})
	writeConf(t, dir, "rivet.conf", "[DEFAULT]\npin_release_version =\n")
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := r.Current().Default.PinReleaseVersion; got != "0.1" || calls != 1 {
		t.Fatalf("after a refusal: pin %q, %d calls; want 0.1 kept, 1 call", got, calls)
	}
	if !strings.Contains(out.String(), "[DEFAULT] pin_release_version") || !strings.Contains(out.String(), "an older service is live") {
		t.Errorf("refusal not logged with the option and cause:\n%s", out.String())
	}
	refuse = false
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := r.Current().Default.PinReleaseVersion; got != "" || calls != 2 {
		t.Fatalf("after the retry: pin %q, %d calls; want unpinned, 2 calls", got, calls)
	}
}
