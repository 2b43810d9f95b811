package host_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// starts reads the start times the test plugin appended to path.
func starts(t *testing.T, path string) []time.Time {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []time.Time
	for line := range strings.Lines(string(b)) {
		ns, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		v, err := strconv.ParseInt(ns, 10, 64)
		if err != nil {
			t.Fatalf("starts file line %q: %v", line, err)
		}
		out = append(out, time.Unix(0, v))
	}
	return out
}

// TestCrashLoopBacksOff runs a plugin that serves one call and crashes on
// the next, over and over: every crash is a retryable error naming the
// driver, and the restarts are spaced by the doubling backoff even though
// each process served a call in between (StableAfter is not reached). A
// caller whose deadline falls before the next restart is told at once.
func TestCrashLoopBacksOff(t *testing.T) {
	startsFile := filepath.Join(t.TempDir(), "starts")
	t.Setenv("RIVET_TESTPLUGIN_STARTS", startsFile)
	t.Setenv("RIVET_TESTPLUGIN_CRASH_AFTER", "1")
	log, logs := newLog(slog.LevelInfo)
	const base, ceiling = 100 * time.Millisecond, 400 * time.Millisecond
	m, d := startTestHost(t, host.Config{Logger: log, RestartBackoff: base, MaxRestartBackoff: ceiling})
	defer m.Close()

	crashes := 0
	for range 12 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := d.GetPowerState(ctx, plugins.Node{UUID: "n1"})
		cancel()
		if err == nil {
			continue
		}
		var crashed *host.PluginCrashedError
		if !errors.As(err, &crashed) || crashed.Driver != "test" || !plugins.IsRetryable(err) {
			t.Fatalf("call %d: %v (%T), want a retryable *PluginCrashedError for driver test", crashes, err, err)
		}
		crashes++
	}
	if crashes != 6 {
		t.Fatalf("%d crashes in 12 calls, want 6 (every second call)", crashes)
	}
	at := starts(t, startsFile)
	if len(at) != crashes { // the last crash is restarted by the next call
		t.Fatalf("%d starts for %d crashes, want %d", len(at), crashes, crashes)
	}
	// at[k] follows crash k, which comes after at[k-1]; after the k-th
	// consecutive crash the restart waits min(base·2^(k-2), ceiling).
	for k := 2; k < crashes; k++ {
		want := min(base<<(k-2), ceiling)
		if gap := at[k].Sub(at[k-1]); gap < want {
			t.Errorf("restart after crash %d came %v after the previous start, want at least the %v backoff", k, gap, want)
		}
	}
	if !strings.Contains(logs.String(), "consecutive_failures=6") {
		t.Errorf("crash count not logged:\n%s", logs)
	}

	// Crash once more, then ask with a deadline shorter than the backoff.
	if _, err := d.GetPowerState(context.Background(), plugins.Node{UUID: "n1"}); err != nil {
		t.Fatalf("call on the restarted plugin: %v", err)
	}
	if _, err := d.GetPowerState(context.Background(), plugins.Node{UUID: "n1"}); !errors.Is(err, host.ErrPluginCrashed) {
		t.Fatalf("second call: %v, want the crash", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ceiling/4)
	defer cancel()
	_, err := d.GetPowerState(ctx, plugins.Node{UUID: "n1"})
	if !errors.Is(err, host.ErrPluginCrashed) || errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "failed 7 times in a row, next restart in") {
		t.Fatalf("call during the backoff: %v, want an immediate crash-loop error", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the call during the backoff waited for its deadline")
	}
}

// TestCrashAtStartIsRefused runs a plugin that exits as it starts: it is
// refused with the reason, its hardware type is not registered (so its
// nodes get "no driver plugin serves this hardware type"), and it is not
// restarted in a loop: it is tried again only when its binary changes.
func TestCrashAtStartIsRefused(t *testing.T) {
	startsFile := filepath.Join(t.TempDir(), "starts")
	t.Setenv("RIVET_TESTPLUGIN_STARTS", startsFile)
	t.Setenv("RIVET_TESTPLUGIN_CRASH_AT_START", "1")
	log, _ := newLog(slog.LevelInfo)
	m, err := host.New(host.Config{Logger: log, BuiltIn: map[string]host.Command{"test": {Path: testPluginBin}},
		WatchInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Driver("test-hardware"); !errors.Is(err, host.ErrUnknownHardwareType) {
		t.Fatalf("Driver: %v, want ErrUnknownHardwareType", err)
	}
	if why := m.Refused()["test"]; why == nil {
		t.Fatalf("refused: %v, want driver test with its reason", m.Refused())
	}
	tried := len(starts(t, startsFile))
	time.Sleep(time.Second) // twenty watch ticks
	if n := len(starts(t, startsFile)); n != tried {
		t.Fatalf("the refused plugin was started %d more times with its binary unchanged", n-tried)
	}
}
