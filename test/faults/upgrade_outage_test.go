package faults

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/test/testenv"
)

// previousRelease is the last cut release: the one the skew rules let run
// beside HEAD while HEAD speaks newer versions than it.
func previousRelease(t *testing.T) release.Entry {
	t.Helper()
	rs := release.Default().Releases()
	prev := rs[len(rs)-1]
	if prev.ServiceVersion == release.Default().Head().ServiceVersion {
		t.Skipf("HEAD has release %s's service version: nothing tells them apart yet", prev.Version)
	}
	return prev
}

// Issue 23 B, with a real database outage: mid-upgrade, a new rivet api
// (pin_release_version = auto) runs beside an old one (the release before HEAD, a
// services row heartbeated by the test). PostgreSQL goes down for longer
// than heartbeat_timeout, so nobody heartbeats; when it comes back the new
// API reconnects first. It must not take the quiet old API for gone: it
// stays pinned to that release and nothing is finalized, and `rivet upgrade status`
// shows the old API as unknown. Only `rivet upgrade forget` (once the old
// API has really gone) lets the pin drop and the release finalize.
func TestDBOutageMidUpgradeDoesNotFinalize(t *testing.T) {
	pg := testenv.StartPostgresServer(t)
	prev := previousRelease(t)
	dir := t.TempDir()
	apiPort := freePort(t)
	const heartbeatTimeout = 3 * time.Second
	conf := writeFile(t, dir, "rivet.conf", fmt.Sprintf(`[DEFAULT]
host = api-new
pin_release_version = auto
service_heartbeat_interval = 1
log_level = debug
[database]
connection = %s
[api]
host_ip = 127.0.0.1
port = %d
[conductor]
heartbeat_interval = 1
heartbeat_timeout = %d
`, pg.URL, apiPort, int(heartbeatTimeout/time.Second)))
	if out, err := rivet(t, nil, "--config-file", conf, "dbsync", "create-schema"); err != nil {
		t.Fatalf("rivet dbsync create-schema: %v\n%s", err, out)
	}
	u, _ := url.Parse(pg.URL)
	u.Scheme = "postgres"
	dbh, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer dbh.Close()
	ctx := context.Background()
	if _, err := dbh.ExecContext(ctx, `INSERT INTO services (hostname, "binary", "release", service_version, pin, online, created_at, updated_at)
		VALUES ('api-old', 'rivet-api', $1, $2, 'auto', TRUE, clock_timestamp(), clock_timestamp())`, prev.Version+".0", prev.ServiceVersion); err != nil {
		t.Fatal(err)
	}
	// The old API's heartbeat, while beating is set.
	var beating atomic.Bool
	beating.Store(true)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(300 * time.Millisecond):
			}
			if beating.Load() {
				_, _ = dbh.ExecContext(ctx, `UPDATE services SET updated_at = clock_timestamp() WHERE hostname = 'api-old'`)
			}
		}
	})
	defer func() { close(stop); wg.Wait() }()

	apiProc := startProc(t, "rivet api", nil, rivetBin, "--config-file", conf, "api")
	base := fmt.Sprintf("http://127.0.0.1:%d", apiPort)
	waitHTTP(t, apiProc, base+"/")
	apiMax := func() string { return apiMaxVersion(base) }
	finalized := func() string {
		var r string
		if err := dbh.QueryRowContext(ctx, `SELECT "release" FROM finalized_release`).Scan(&r); err != nil {
			return "(" + err.Error() + ")"
		}
		return r
	}
	// fresh reports whether the new API heartbeated within the last second.
	fresh := func() bool {
		var ok bool
		err := dbh.QueryRowContext(ctx, `SELECT updated_at > clock_timestamp() - interval '1 second' FROM services WHERE hostname = 'api-new'`).Scan(&ok)
		return err == nil && ok
	}
	if got := apiMax(); got != prev.API.String() {
		t.Fatalf("beside a live %s API the new API serves up to %s, want its %s", prev.Version, got, prev.API)
	}
	if got := finalized(); got != prev.Release() {
		t.Fatalf("finalized release %s before the outage, want %s", got, prev.Release())
	}

	// The outage: nobody heartbeats for twice heartbeat_timeout.
	beating.Store(false)
	pg.Stop(t)
	time.Sleep(2 * heartbeatTimeout)
	pg.Start(t)
	waitUntil(t, 60*time.Second, "the new API heartbeating again after the outage", fresh)
	// Several heartbeats of the new API while the old one stays quiet.
	for range 4 {
		time.Sleep(time.Second)
		apiProc.running(t)
		if got := apiMax(); got != prev.API.String() {
			t.Fatalf("after the outage the new API serves up to %s while the old API is only quiet, want %s", got, prev.API)
		}
		if got := finalized(); got != prev.Release() {
			t.Fatalf("after the outage the finalized release moved to %s while the old API is only quiet", got)
		}
	}
	out, err := rivet(t, nil, "--config-file", conf, "upgrade", "status", "--json")
	if err != nil {
		t.Fatalf("upgrade status: %v\n%s", err, out)
	}
	states := serviceStates(t, out, 0)
	if states["api-old"] != "unknown" || states["api-new"] != "live" {
		t.Errorf("upgrade status after the outage: states %v, want api-old unknown and api-new live", states)
	}

	// The old API is really gone: the operator says so, and the new API
	// unpins at its next heartbeats and finalizes.
	out, err = rivet(t, nil, "--config-file", conf, "upgrade", "forget", "api", "api-old")
	if err != nil || !strings.Contains(out, "Forgot rivet-api on api-old") {
		t.Fatalf("upgrade forget: %v\n%s", err, out)
	}
	waitUntil(t, 15*time.Second, "the new API unpinning once the old one is forgotten", func() bool {
		apiProc.running(t)
		// HEAD's API maximum may equal the old release's (while a
		// release's new versions are not yet advertised): the finalized
		// release says the unpin happened.
		return apiMax() == release.Default().Head().API.String() && finalized() == release.Current
	})
	if got := finalized(); got != release.Current {
		t.Errorf("finalized release %s after the unpin, want %s", got, release.Current)
	}
}

// Issue 23 A and B with the real previous release: its rivet api and a
// new one, both pin_release_version = auto, on one database. SIGSTOP of the
// old API for three heartbeat_timeouts once let the new one unpin and
// finalize, and the old one exited for good when continued. Now the new API
// stays at its API maximum, nothing is finalized, status shows the old
// API unknown, and after SIGCONT the old API still serves. Online data
// migrations (new binary) refuse while it runs, so it still reads every
// node (it once answered 500 on rows moved to Node 1.1).
func TestPausedOldAPIDoesNotFinalize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the previous release from git history")
	}
	// The release before HEAD: the skew rules let only it run beside HEAD.
	prev := previousRelease(t)
	oldBin := testenv.BuildRelease(t, prev.Version, "./cmd/rivet") + "/rivet"
	conn := testenv.RequirePostgres(t)
	dir := t.TempDir()
	const heartbeatTimeout = 3 * time.Second
	config := func(host string, port int) string {
		return writeFile(t, dir, host+".conf", fmt.Sprintf(`[DEFAULT]
host = %s
pin_release_version = auto
service_heartbeat_interval = 1
[database]
connection = %s
[api]
host_ip = 127.0.0.1
port = %d
[conductor]
heartbeat_interval = 1
heartbeat_timeout = %d
`, host, conn, port, int(heartbeatTimeout/time.Second)))
	}
	oldPort, newPort := freePort(t), freePort(t)
	oldConf, newConf := config("api-old", oldPort), config("api-new", newPort)
	run := func(bin, conf string, args ...string) (string, int) {
		cmd := exec.Command(bin, append([]string{"--config-file", conf}, args...)...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	if out, code := run(oldBin, oldConf, "dbsync", "create-schema"); code != 0 {
		t.Fatalf("old dbsync create-schema: exit %d\n%s", code, out)
	}
	oldAPI := startProc(t, "rivet api (old)", nil, oldBin, "--config-file", oldConf, "api")
	oldClient := newAPIClient(fmt.Sprintf("http://127.0.0.1:%d", oldPort))
	waitHTTP(t, oldAPI, oldClient.base+"/")
	if out, code := run(rivetBin, newConf, "dbsync", "upgrade"); code != 0 { // step 0
		t.Fatalf("dbsync upgrade: exit %d\n%s", code, out)
	}
	// A node written by the old release (at Node 1.0, which it still
	// reads), as a conductor-less API can: the row goes in directly.
	u, _ := url.Parse(conn)
	u.Scheme = "postgres"
	dbh, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer dbh.Close()
	ctx := context.Background()
	if _, err := dbh.ExecContext(ctx, `INSERT INTO nodes (uuid, name, driver, version, provision_state, created_at)
		VALUES ('10000000-0000-0000-0000-000000000001', 'n1', 'fake-hardware', '1.0', 'enroll', now())`); err != nil {
		t.Fatal(err)
	}
	newAPI := startProc(t, "rivet api (new)", nil, rivetBin, "--config-file", newConf, "api")
	newBase := fmt.Sprintf("http://127.0.0.1:%d", newPort)
	waitHTTP(t, newAPI, newBase+"/")
	apiMax := func() string { return apiMaxVersion(newBase) }
	// finalized is the watermark's service version (a point release
	// records its own release string, e.g. "0.2.1", for what the table
	// calls 0.2).
	finalized := func() int {
		var sv int
		if err := dbh.QueryRowContext(ctx, `SELECT service_version FROM finalized_release`).Scan(&sv); err != nil {
			t.Fatal(err)
		}
		return sv
	}
	if got := apiMax(); got != prev.API.String() {
		t.Fatalf("beside an old API the new API serves up to %s, want %s", got, prev.API)
	}

	oldAPI.signal(t, syscall.SIGSTOP)
	deadline := time.Now().Add(3 * heartbeatTimeout)
	for time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		if got := apiMax(); got != prev.API.String() {
			oldAPI.signal(t, syscall.SIGCONT)
			t.Fatalf("with the old API paused the new API serves up to %s, want %s", got, prev.API)
		}
	}
	if got := finalized(); got != prev.ServiceVersion {
		t.Errorf("with the old API paused the finalized release moved to service version %d", got)
	}
	statusOut, statusCode := run(rivetBin, newConf, "upgrade", "status", "--json")
	if states := serviceStates(t, statusOut, statusCode); states["api-old"] != "unknown" {
		t.Errorf("upgrade status with the old API paused: states %v, want api-old unknown", states)
	}
	out, code := run(rivetBin, newConf, "dbsync", "online-data-migrations")
	if code != 2 || !strings.Contains(out, "rivet-api on api-old (release "+prev.Version) {
		t.Errorf("online-data-migrations beside a paused old API: exit %d, want 2 naming it\n%s", code, out)
	}
	oldAPI.signal(t, syscall.SIGCONT)
	time.Sleep(3 * time.Second) // a few of its heartbeats
	oldAPI.running(t)
	r, err := oldClient.do(http.MethodGet, "/v1/nodes", nil)
	if err != nil || r.status != http.StatusOK || !strings.Contains(string(r.body), "10000000-0000-0000-0000-000000000001") {
		t.Fatalf("the old API after SIGCONT: GET /v1/nodes = %v, %v", r, err)
	}
	if got := apiMax(); got != prev.API.String() {
		t.Errorf("after SIGCONT the new API serves up to %s", got)
	}
}

// serviceStates reads `rivet upgrade status --json` (out, exit code):
// hostname → state.
func serviceStates(t *testing.T, out string, code int) map[string]string {
	t.Helper()
	var st struct {
		Services []struct {
			Hostname string
			State    string `json:"state"`
		} `json:"services"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("upgrade status --json: exit %d\n%s", code, out)
	}
	states := map[string]string{}
	for _, s := range st.Services {
		states[s.Hostname] = s.State
	}
	return states
}

// apiMaxVersion is the maximum microversion the API at base announces on
// its root (default_version), "" while it does not answer.
func apiMaxVersion(base string) string {
	res, err := (&http.Client{Timeout: 2 * time.Second}).Get(base + "/")
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	var root struct {
		DefaultVersion struct {
			Version string `json:"version"`
		} `json:"default_version"`
	}
	if json.NewDecoder(res.Body).Decode(&root) != nil {
		return ""
	}
	return root.DefaultVersion.Version
}
