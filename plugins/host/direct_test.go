package host_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// TestDirectChannel: a plugin process built with this SDK gets the direct
// channel (logged at start); its socket lives in a private directory under
// the plugin's temporary directory, which is gone after the plugin stops,
// whether it exits (Close) or is killed (the host removes what is left).
func TestDirectChannel(t *testing.T) {
	tmp := t.TempDir()
	log, logs := newLog(slog.LevelInfo)
	m, d := startTestHost(t, host.Config{Logger: log,
		BuiltIn: map[string]host.Command{"test": {Path: testPluginBin, Env: []string{"TMPDIR=" + tmp}}}})
	defer m.Close()
	sockets := func() []string {
		t.Helper()
		found, err := filepath.Glob(filepath.Join(tmp, "rivet-direct-*", "s"))
		if err != nil {
			t.Fatal(err)
		}
		return found
	}
	if !strings.Contains(logs.String(), "direct_channel=true") {
		t.Fatalf("start not logged with direct_channel=true:\n%s", logs)
	}
	if got := sockets(); len(got) != 1 {
		t.Fatalf("sockets under the plugin's TMPDIR: %v, want one", got)
	}
	ctx := context.Background()
	if ps, err := d.GetPowerState(ctx, plugins.Node{UUID: "n1"}); err != nil || ps != plugins.PowerOff {
		t.Fatalf("GetPowerState: %q, %v", ps, err)
	}

	// Killed: nothing in the plugin runs, the host cleans up at the restart.
	oldPID := pid(t, d)
	if err := syscall.Kill(oldPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "killed plugin process to disappear", func() bool { return processGone(oldPID) })
	// The next call meets the dead process (over the channel, then gRPC),
	// fails as a crash or restarts it; either way the old socket goes.
	waitFor(t, "a call on a restarted plugin", func() bool {
		_, err := d.GetPowerState(ctx, plugins.Node{UUID: "n1"})
		return err == nil && pid(t, d) != oldPID
	})
	if got := sockets(); len(got) != 1 {
		t.Fatalf("after a kill and a restart, sockets: %v, want the new one only", got)
	}

	m.Close()
	if got := sockets(); len(got) != 0 {
		t.Fatalf("after Close, sockets left: %v", got)
	}
	if dirs, _ := filepath.Glob(filepath.Join(tmp, "rivet-direct-*")); len(dirs) != 0 {
		t.Fatalf("after Close, directories left: %v", dirs)
	}
}
