package host_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// startTestHost starts a Manager running the test plugin as driver "test".
func startTestHost(t *testing.T, cfg host.Config) (*host.Manager, *host.Driver) {
	t.Helper()
	if cfg.BuiltIn == nil && cfg.PluginDir == "" {
		cfg.BuiltIn = map[string]host.Command{"test": {Path: testPluginBin}}
	}
	if cfg.WatchInterval == 0 {
		cfg.WatchInterval = -1
	}
	m, err := host.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		m.Close()
		t.Fatal(err)
	}
	d, err := m.Driver("test-hardware")
	if err != nil {
		m.Close()
		t.Fatalf("%v (refused: %v)", err, m.Refused())
	}
	return m, d
}

func pid(t *testing.T, d *host.Driver) int {
	t.Helper()
	reg, ok := d.Registration()
	if !ok || reg.PID == 0 {
		t.Fatalf("no running plugin (registration %+v)", reg)
	}
	return reg.PID
}

// processGone reports whether pid no longer runs (absent or a zombie).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKillDuringCall SIGKILLs the plugin while a call is in flight: the call
// fails with a retryable *PluginCrashedError naming the driver, the next
// call succeeds on a restarted process, the old process is gone, and once
// the host closes no goroutine is left behind.
func TestKillDuringCall(t *testing.T) {
	log, logs := newLog(slog.LevelInfo)
	// Warm up once so that goroutines grpc starts for good are in the baseline.
	warm, _ := startTestHost(t, host.Config{Logger: log})
	warm.Close()
	time.Sleep(100 * time.Millisecond)
	baseline := runtime.NumGoroutine()

	m, d := startTestHost(t, host.Config{Logger: log})
	oldPID := pid(t, d)
	ctx := context.Background()
	slow := plugins.Node{UUID: "n1", DriverInfo: plugins.DriverInfo{"sleep_ms": 10000}}
	errc := make(chan error, 1)
	go func() { _, err := d.GetPowerState(ctx, slow); errc <- err }()
	time.Sleep(200 * time.Millisecond) // let the call reach the plugin
	if err := syscall.Kill(oldPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("in-flight call did not return after the plugin was killed")
	}
	var crashed *host.PluginCrashedError
	if !errors.As(err, &crashed) || crashed.Driver != "test" {
		t.Fatalf("error %v (%T), want *host.PluginCrashedError for driver test", err, err)
	}
	if !plugins.IsRetryable(err) || !strings.Contains(err.Error(), "driver test: ") || !strings.Contains(err.Error(), "get power state") {
		t.Errorf("error %q: want retryable, naming the driver and the operation", err)
	}

	ps, err := d.GetPowerState(ctx, plugins.Node{UUID: "n1"})
	if err != nil || ps != plugins.PowerOff {
		t.Fatalf("call after restart: %q, %v", ps, err)
	}
	newPID := pid(t, d)
	if newPID == oldPID {
		t.Fatalf("plugin pid %d did not change after restart", newPID)
	}
	waitFor(t, "killed plugin process to disappear", func() bool { return processGone(oldPID) })
	if !strings.Contains(logs.String(), "driver plugin crashed") {
		t.Errorf("crash not logged:\n%s", logs)
	}

	m.Close()
	waitFor(t, "restarted plugin process to exit on Close", func() bool { return processGone(newPID) })
	waitFor(t, "goroutines to settle", func() bool { return runtime.NumGoroutine() <= baseline })
}

// TestCrashBetweenCalls kills an idle plugin: the next call notices the exit
// and restarts it without failing.
func TestCrashBetweenCalls(t *testing.T) {
	log, _ := newLog(slog.LevelInfo)
	m, d := startTestHost(t, host.Config{Logger: log})
	defer m.Close()
	oldPID := pid(t, d)
	if err := syscall.Kill(oldPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "killed plugin process to disappear", func() bool { return processGone(oldPID) })
	time.Sleep(50 * time.Millisecond) // let go-plugin notice the exit
	if err := d.SetPowerState(context.Background(), plugins.Node{UUID: "n1"}, plugins.PowerOn); err != nil {
		t.Fatalf("call after idle crash: %v", err)
	}
	if pid(t, d) == oldPID {
		t.Fatal("plugin was not restarted")
	}
}

// TestPluginLogsForwarded checks that a plugin's hclog JSON lines reach the
// host's slog logger with their attributes, and that secret values are
// masked on the way.
func TestPluginLogsForwarded(t *testing.T) {
	log, logs := newLog(slog.LevelInfo)
	m, _ := startTestHost(t, host.Config{Logger: log})
	m.Close()
	out := logs.String()
	if !strings.Contains(out, "testplugin starting") || !strings.Contains(out, "ipmi_password=******") {
		t.Errorf("plugin line not forwarded with masked secret:\n%s", out)
	}
	if strings.Contains(out, "hunter2") {
		t.Errorf("secret leaked into host log:\n%s", out)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
