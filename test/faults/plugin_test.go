package faults

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pluginDir returns a directory holding the test plugin as
// rivet-driver-test (hardware type test-hardware).
func pluginDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(testPluginBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rivet-driver-test"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// countLines counts the lines of a file that may not exist yet.
func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// A driver plugin that serves one call and crashes on the next, over and
// over, next to a healthy driver in the same conductor: a hard power on or
// off the plugin died during is repeated once on the restarted plugin
// (which serves it), and an action that still fails names the driver and
// the crash; the restarts back off (they do not follow the rate of the
// calls); the conductor keeps serving the other driver's nodes and stays
// up.
func TestPluginCrashLoop(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	aio := allInOne(t, filepath.Join(t.TempDir(), "rivet.db"), pluginDir(t),
		"RIVET_CONDUCTOR_ENABLED_HARDWARE_TYPES=fake-hardware,test-hardware",
		"RIVET_CONDUCTOR_SYNC_POWER_STATE_INTERVAL=0",
		"RIVET_TESTPLUGIN_CRASH_AFTER=1", "RIVET_TESTPLUGIN_STARTS="+starts)
	api := aio.api
	api.createNode(t, "test-hardware", "crashy", nil)
	api.createNode(t, "fake-hardware", "steady", nil)
	startsBefore := countLines(t, starts)

	// Ask as fast as the conductor answers for a while: each process of
	// the plugin serves one call, so without backoff every second action
	// would restart it.
	const window = 10 * time.Second
	var actions, failed, steadyOK int
	var lastErr string
	for end := time.Now().Add(window); time.Now().Before(end); {
		target := []string{"power on", "power off"}[actions%2]
		api.setPower(t, "crashy", target)
		n := api.waitNode(t, 60*time.Second, "crashy", "the power action ending", func(n node) bool {
			return n.Reservation == nil && (n.lastError() != "" || n.power() == target)
		})
		actions++
		if n.lastError() != "" {
			failed++
			lastErr = n.lastError()
			if !strings.Contains(lastErr, "test-hardware") || !strings.Contains(lastErr, "driver plugin crashed") {
				t.Fatalf("crashy: last_error %q does not say that the test-hardware driver crashed", lastErr)
			}
		}
		// The other driver is served in between, at once.
		api.setPower(t, "steady", target)
		api.waitNode(t, 10*time.Second, "steady", "powered "+target, func(n node) bool {
			return n.Reservation == nil && n.power() == target
		})
		steadyOK++
	}
	restarts := countLines(t, starts) - startsBefore
	t.Logf("%d actions on the crashing driver in %v: %d failed, %d plugin restarts; last error: %s",
		actions, window, failed, restarts, lastErr)
	t.Logf("%d actions on the other driver, all done", steadyOK)
	if restarts == 0 || actions < 6 {
		t.Fatalf("%d actions, %d plugin restarts: the crash loop was not exercised", actions, restarts)
	}
	// Every other action met a crash; each was repeated on the restarted
	// plugin, whose first call succeeds.
	if failed > 0 {
		t.Errorf("%d of %d power on/off actions failed although the restarted plugin serves its first call: not repeated after the crash", failed, actions)
	}
	// Backoff 0, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4 s… after the 1st, 2nd, …
	// consecutive crash: at most 8 starts fit in 10 s (12.6 s for 8 gaps).
	if restarts > 8 {
		t.Errorf("%d plugin restarts in %v for %d actions: the restarts follow the calls instead of backing off", restarts, window, actions)
	}
	if !strings.Contains(aio.log.String(), "consecutive_failures=4") {
		t.Errorf("the conductor log does not count consecutive crashes")
	}
	aio.running(t)
	api.must(t, http.StatusOK, http.MethodGet, "/v1/nodes/steady", nil)
}

// A power action in flight when its plugin dies, after the BMC acted: a
// hard power on is repeated once on the restarted plugin and the node
// records the state reached without last_error; a reboot is not repeated:
// the power state is read back from the BMC and recorded with a last_error
// that says what happened. On 9b9faca both ended with last_error "driver
// plugin crashed" and the power state from before the action.
func TestPluginCrashDuringPowerAction(t *testing.T) {
	dir := t.TempDir()
	aio := allInOne(t, filepath.Join(dir, "rivet.db"), pluginDir(t),
		"RIVET_CONDUCTOR_ENABLED_HARDWARE_TYPES=fake-hardware,test-hardware",
		"RIVET_CONDUCTOR_SYNC_POWER_STATE_INTERVAL=0",
		"RIVET_TESTPLUGIN_CRASH_AFTER=1", "RIVET_TESTPLUGIN_CRASH_APPLIED=1",
		"RIVET_TESTPLUGIN_STATE="+filepath.Join(dir, "bmc.json"))
	api := aio.api
	api.createNode(t, "test-hardware", "crashy", nil)
	done := func(target string) node {
		return api.waitNode(t, 60*time.Second, "crashy", target+" ending", func(n node) bool { return n.Reservation == nil })
	}
	// The plugin's first call: served.
	api.setPower(t, "crashy", "power off")
	if n := done("power off"); n.power() != "power off" || n.lastError() != "" {
		t.Fatalf("power off: %q, last_error %q", n.power(), n.lastError())
	}
	// Its second call applies and crashes: repeated on the next plugin.
	api.setPower(t, "crashy", "power on")
	if n := done("power on"); n.power() != "power on" || n.lastError() != "" {
		t.Fatalf("power on interrupted by a crash: power %q, last_error %q; want power on, no error (repeated once)", n.power(), n.lastError())
	}
	// The next plugin's second call is a reboot: it applies and crashes,
	// is not repeated, and the state is read back (the third plugin's
	// first call).
	api.setPower(t, "crashy", "rebooting")
	n := done("reboot")
	t.Logf("reboot interrupted by a crash: power %q, last_error %q", n.power(), n.lastError())
	if n.power() != "power on" {
		t.Errorf("power %q after the reboot, want what the BMC reports: power on", n.power())
	}
	for _, part := range []string{"driver plugin crashed", "not repeated", "the BMC now reports power on"} {
		if !strings.Contains(n.lastError(), part) {
			t.Errorf("last_error %q does not say %q", n.lastError(), part)
		}
	}
	aio.running(t)
}

// A driver plugin that exits as it starts is refused once, logged with
// the reason, and not restarted in a loop; a node of its hardware type
// cannot be enrolled (no conductor serves it, which the API says), and the
// conductor serves its other driver.
func TestPluginCrashAtStart(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	aio := allInOne(t, filepath.Join(t.TempDir(), "rivet.db"), pluginDir(t),
		"RIVET_CONDUCTOR_ENABLED_HARDWARE_TYPES=fake-hardware,test-hardware",
		"RIVET_TESTPLUGIN_CRASH_AT_START=1", "RIVET_TESTPLUGIN_STARTS="+starts)
	api := aio.api
	if !strings.Contains(aio.log.String(), "driver plugin refused") {
		t.Fatal("the conductor does not log the plugin it refused")
	}
	r, err := api.do(http.MethodPost, "/v1/nodes", map[string]any{"driver": "test-hardware", "name": "orphan"})
	if err != nil || r.status != http.StatusBadRequest || !strings.Contains(r.fault(), "test-hardware") {
		t.Fatalf("enrolling a node of the refused driver: %v %v, want 400 naming the hardware type", r, err)
	}
	t.Logf("enrolling a node of the refused driver: %d %s", r.status, r.fault())
	api.createNode(t, "fake-hardware", "steady", nil)
	api.setPower(t, "steady", "power on")
	api.waitNode(t, 10*time.Second, "steady", "powered on", func(n node) bool { return n.Reservation == nil && n.power() == "power on" })
	tried := countLines(t, starts)
	time.Sleep(3 * time.Second)
	if n := countLines(t, starts); n != tried || tried > 2 {
		t.Errorf("the refused plugin was started %d times, then %d more in 3 s; want one try (and a describe run)", tried, n-tried)
	}
	aio.running(t)
}
