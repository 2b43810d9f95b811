package faults

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/test/testenv"
)

// Issue 23 B, with a real database outage: mid-upgrade, a new rivet api
// (pin_release_version = auto) runs beside an old one (release 0.1, a
// services row heartbeated by the test). PostgreSQL goes down for longer
// than heartbeat_timeout, so nobody heartbeats; when it comes back the new
// API reconnects first. It must not take the quiet old API for gone: it
// stays pinned to 0.1 and nothing is finalized, and `rivet upgrade status`
// shows the old API as unknown. Only `rivet upgrade forget` (once the old
// API has really gone) lets the pin drop and the release finalize.
func TestDBOutageMidUpgradeDoesNotFinalize(t *testing.T) {
	pg := testenv.StartPostgresServer(t)
	tb := release.Default()
	r01, ok := tb.Lookup("0.1")
	if !ok {
		t.Fatal("the release table lists no 0.1")
	}
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
		VALUES ('api-old', 'rivet-api', '0.1.1', $1, 'auto', TRUE, clock_timestamp(), clock_timestamp())`, r01.ServiceVersion); err != nil {
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
	apiMax := func() string {
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
	if got := apiMax(); got != r01.API.String() {
		t.Fatalf("beside a live 0.1 API the new API serves up to %s, want 0.1's %s", got, r01.API)
	}
	if got := finalized(); got != r01.Release() {
		t.Fatalf("finalized release %s before the outage, want %s", got, r01.Release())
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
		if got := apiMax(); got != r01.API.String() {
			t.Fatalf("after the outage the new API serves up to %s while the 0.1 API is only quiet, want %s", got, r01.API)
		}
		if got := finalized(); got != r01.Release() {
			t.Fatalf("after the outage the finalized release moved to %s while the 0.1 API is only quiet", got)
		}
	}
	out, err := rivet(t, nil, "--config-file", conf, "upgrade", "status", "--json")
	if err != nil {
		t.Fatalf("upgrade status: %v\n%s", err, out)
	}
	var st struct {
		Services []struct {
			Hostname string `json:"hostname"`
			State    string `json:"state"`
		} `json:"services"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("upgrade status --json: %v\n%s", err, out)
	}
	states := map[string]string{}
	for _, s := range st.Services {
		states[s.Hostname] = s.State
	}
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
		return apiMax() == tb.Head().API.String()
	})
	if got := finalized(); got != release.Current {
		t.Errorf("finalized release %s after the unpin, want %s", got, release.Current)
	}
}
