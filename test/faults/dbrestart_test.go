package faults

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // to read what the database holds

	"github.com/rivetmetal/rivet/test/testenv"
)

// writeLoad creates nodes from several clients until stopped, recording
// what the API acknowledged and how every other request ended.
type writeLoad struct {
	mu       sync.Mutex
	acked    []string       // names of nodes created (201)
	failures map[int]int    // status → count, for non-201 answers
	faults   map[string]int // faultstring → count
	errs     []error        // no HTTP answer at all
	wg       sync.WaitGroup
	stop     chan struct{}
}

func startWriteLoad(api *apiClient, clients int) *writeLoad {
	l := &writeLoad{failures: map[int]int{}, faults: map[string]int{}, stop: make(chan struct{})}
	for c := range clients {
		l.wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				name := fmt.Sprintf("load-%d-%d", c, i)
				r, err := api.do(http.MethodPost, "/v1/nodes", map[string]any{"driver": "fake-hardware", "name": name})
				l.mu.Lock()
				switch {
				case err != nil:
					l.errs = append(l.errs, err)
				case r.status == http.StatusCreated:
					l.acked = append(l.acked, name)
				default:
					l.failures[r.status]++
					l.faults[r.fault()]++
				}
				l.mu.Unlock()
				if err != nil || r.status != http.StatusCreated {
					time.Sleep(20 * time.Millisecond) // a failing API is not spun on
				}
			}
		})
	}
	return l
}

func (l *writeLoad) ackedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

func (l *writeLoad) end() {
	close(l.stop)
	l.wg.Wait()
}

// The database is restarted (pg_ctl stop -m fast, a few seconds down,
// start) while clients create nodes through rivet api and rivet conductor:
// requests during the outage fail fast with 503 and Ironic's body, never a
// 500 or a hang; both services recover on their own; every node the API
// acknowledged is in the database afterwards.
func TestDBRestartMidLoad(t *testing.T) {
	pg := testenv.StartPostgresServer(t)
	dir := t.TempDir()
	apiPort, rpcPort := freePort(t), freePort(t)
	conf := writeFile(t, dir, "rivet.conf", fmt.Sprintf(`[DEFAULT]
host = 127.0.0.1
log_level = debug
[database]
connection = %s
[api]
host_ip = 127.0.0.1
port = %d
[conductor]
heartbeat_interval = 1
heartbeat_timeout = 30
enabled_hardware_types = fake-hardware
plugin_dir = %s
sync_power_state_interval = 0
graceful_shutdown_timeout = 5
[json_rpc]
host_ip = 127.0.0.1
port = %d
`, pg.URL, apiPort, dir, rpcPort))
	if out, err := rivet(t, nil, "--config-file", conf, "dbsync", "create-schema"); err != nil {
		t.Fatalf("rivet dbsync create-schema: %v\n%s", err, out)
	}
	cond := startProc(t, "rivet conductor", nil, rivetBin, "--config-file", conf, "conductor")
	apiProc := startProc(t, "rivet api", nil, rivetBin, "--config-file", conf, "api")
	api := newAPIClient(fmt.Sprintf("http://127.0.0.1:%d", apiPort))
	waitHTTP(t, apiProc, api.base+"/")
	waitUntil(t, 60*time.Second, "the conductor taking node creations", func() bool {
		cond.running(t)
		r, err := api.do(http.MethodPost, "/v1/nodes", map[string]any{"driver": "fake-hardware", "name": "first"})
		return err == nil && r.status == http.StatusCreated
	})

	load := startWriteLoad(api, 4)
	waitUntil(t, 60*time.Second, "writes before the outage", func() bool { return load.ackedCount() >= 20 })
	pg.Stop(t)
	time.Sleep(3 * time.Second)
	pg.Start(t)
	before := load.ackedCount()
	waitUntil(t, 90*time.Second, "writes succeeding again after the restart", func() bool {
		return load.ackedCount() >= before+20
	})
	load.end()
	t.Logf("acknowledged %d creations; failures by status %v; faults %v", len(load.acked), load.failures, load.faults)

	if len(load.errs) > 0 {
		t.Errorf("%d requests got no HTTP answer (the API must answer every request within %v), first: %v",
			len(load.errs), requestTimeout, load.errs[0])
	}
	if load.failures[http.StatusServiceUnavailable] == 0 {
		t.Errorf("no request failed with 503 while the database was down: failures %v", load.failures)
	}
	for status, n := range load.failures {
		if status != http.StatusServiceUnavailable {
			t.Errorf("%d requests answered %d during the outage, want 503 only (faults %v)", n, status, load.faults)
		}
	}
	for fault := range load.faults {
		if !strings.HasPrefix(fault, "Resource temporarily unavailable, please retry.") {
			t.Errorf("a failed request's Ironic faultstring is %q, want a retry-later message", fault)
		}
	}
	cond.running(t)
	apiProc.running(t)

	// Every acknowledged node is in the database.
	u, _ := url.Parse(pg.URL)
	u.Scheme = "postgres"
	dbh, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer dbh.Close()
	rows, err := dbh.QueryContext(context.Background(), "SELECT name FROM nodes")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var stored []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var lost []string
	for _, name := range load.acked {
		if !slices.Contains(stored, name) {
			lost = append(lost, name)
		}
	}
	if len(lost) > 0 {
		t.Fatalf("%d acknowledged nodes are not in the database: %v", len(lost), lost)
	}
	// The conductor is live again by the database's clock.
	var live bool
	if err := dbh.QueryRowContext(context.Background(),
		"SELECT online AND updated_at > clock_timestamp() - interval '5 seconds' FROM conductors WHERE hostname = $1",
		fmt.Sprintf("127.0.0.1:%d", rpcPort)).Scan(&live); err != nil || !live {
		t.Fatalf("conductor not heartbeating after the restart: live=%v err=%v", live, err)
	}
}
