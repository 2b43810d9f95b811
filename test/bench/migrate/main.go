// Command migrate measures `rivet dbsync online-data-migrations` on a large
// PostgreSQL table while readers keep fetching nodes (issue 11's target:
// 1,000,000 node rows in 60 s or less while the API keeps serving):
//
//	go run ./test/bench/migrate --rows 1000000 [--dsn postgresql://postgres@127.0.0.1:5432/postgres?sslmode=disable] [--read-rate 200] [--json]
//
// It creates a private database on the server of --dsn (dropped at the end
// unless --keep), applies the schema release 0.1 shipped, loads --rows
// nodes shaped as 0.1 wrote them (Node 1.0: a template node created through
// the versioned store pinned to 0.1, copied with fresh uuids and names and
// drivers fake-hardware, ipmi and redfish in turn), upgrades the schema to
// HEAD (the node interface columns arrive NULL), vacuums, then runs the
// online data migrations exactly as the command does (dbsync.Syncer with
// the command's registry) and times them to completion. Meanwhile
// --readers goroutines fetch random nodes by uuid through db.Store.GetNode
// on their own connection pool, as the API does, --read-rate a second in
// all (0: as fast as they can); their latency is reported for a baseline
// before the run and for the run itself. At the end every row must be at
// Node 1.1 with its interfaces set, or it fails.
//
// Loading 1,000,000 rows takes minutes; --template NAME keeps the loaded
// database under that name (loading it the first time) and clones it for
// each run (CREATE DATABASE … TEMPLATE), so runs can be repeated quickly;
// with --prepare it only loads it. The template must have been loaded with
// the same --rows.
package main

import (
	"context"
	crand "crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // admin connection that creates the private database
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbsync"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/db/migrations"
	"github.com/rivetmetal/rivet/db/onlinemigrations"
)

type options struct {
	dsn       string
	rows      int
	readers   int
	readRate  float64
	batch     int
	workers   int
	template  string
	prepare   bool
	verbose   bool
	baseline  time.Duration
	keep      bool
	jsonOut   bool
	loadChunk int
}

// Result is what one run measured.
type Result struct {
	Machine     string  `json:"machine"`
	Rows        int     `json:"rows"`
	LoadS       float64 `json:"load_s"`
	MigrateS    float64 `json:"migrate_s"`
	RowsPerS    float64 `json:"rows_per_s"`
	Passes      int     `json:"passes"`
	BatchSize   int     `json:"batch_size"`
	Workers     int     `json:"workers"`
	Baseline    Reads   `json:"reads_baseline"`
	During      Reads   `json:"reads_during_migration"`
	Database    string  `json:"database"`
	MigrateLast string  `json:"last_output_line"`
}

// Reads are the readers' figures over one period.
type Reads struct {
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	Rate     float64 `json:"rate_per_s"`
	P50ms    float64 `json:"p50_ms"`
	P99ms    float64 `json:"p99_ms"`
	Maxms    float64 `json:"max_ms"`
}

func main() {
	var o options
	def := os.Getenv("RIVET_TEST_POSTGRES_DSN")
	if def == "" {
		def = "postgresql://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	flag.StringVar(&o.dsn, "dsn", def, "PostgreSQL server (any database on it); a private database is created there")
	flag.IntVar(&o.rows, "rows", 1_000_000, "node rows to load and migrate")
	flag.IntVar(&o.readers, "readers", 4, "goroutines fetching nodes by uuid during the run (0: none)")
	flag.Float64Var(&o.readRate, "read-rate", 200, "GETs per second the readers make in all (0: as fast as they can)")
	flag.IntVar(&o.batch, "batch-size", 0, "objects per pass of the migrations (0: the command's default)")
	flag.IntVar(&o.workers, "workers", 0, "chunk UPDATEs run at once (0: the command's default, "+
		"2 on PostgreSQL; --option backfill_node_interfaces.workers)")
	flag.StringVar(&o.template, "template", "", "keep the loaded rows in this database and clone it for the run (loaded if missing)")
	flag.BoolVar(&o.verbose, "v", false, "print the command's output lines with the time since it started")
	flag.BoolVar(&o.prepare, "prepare", false, "only load the --template database, then exit")
	flag.DurationVar(&o.baseline, "baseline", 5*time.Second, "how long readers run before the migrations, for a baseline")
	flag.IntVar(&o.loadChunk, "load-chunk", 100_000, "rows per INSERT … SELECT while loading")
	flag.BoolVar(&o.keep, "keep", false, "keep the database (its name is printed)")
	flag.BoolVar(&o.jsonOut, "json", false, "print the result as JSON")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "migrate:", err)
		os.Exit(1)
	}
	if o.jsonOut {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
		return
	}
	fmt.Printf("machine: %s\n", res.Machine)
	fmt.Printf("rows %d: loaded in %.1f s; online data migrations %.1f s (%.0f rows/s, %d passes)\n",
		res.Rows, res.LoadS, res.MigrateS, res.RowsPerS, res.Passes)
	fmt.Printf("reads before: %s\n", res.Baseline)
	fmt.Printf("reads during: %s\n", res.During)
}

func (r Reads) String() string {
	return fmt.Sprintf("%d GET node by uuid, %d errors, %.0f/s, p50 %.2f ms, p99 %.2f ms, max %.2f ms",
		r.Requests, r.Errors, r.Rate, r.P50ms, r.P99ms, r.Maxms)
}

func machine() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s %s/%s, %d CPUs, %s", host, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
}

func run(ctx context.Context, o options) (*Result, error) {
	if o.prepare && o.template == "" {
		return nil, fmt.Errorf("--prepare needs --template")
	}
	if o.rows < 1 {
		return nil, fmt.Errorf("--rows %d: give at least 1", o.rows)
	}
	res := &Result{Machine: machine(), Rows: o.rows, BatchSize: o.batch, Workers: o.workers}
	if res.BatchSize == 0 {
		res.BatchSize = onlinemigrations.BatchSize
	}
	start := time.Now()
	var conn string
	if o.template != "" {
		tmpl, _, err := database(ctx, o.dsn, o.template, "", true)
		if err != nil {
			return nil, err
		}
		if tmpl != "" { // created: load it
			if err := load(ctx, tmpl, o); err != nil {
				return nil, err
			}
		}
		if o.prepare {
			fmt.Fprintf(os.Stderr, "database %s ready in %.1f s\n", o.template, time.Since(start).Seconds())
			os.Exit(0)
		}
		c, drop, err := database(ctx, o.dsn, "", o.template, o.keep)
		if err != nil {
			return nil, err
		}
		defer drop()
		conn = c
	} else {
		c, drop, err := database(ctx, o.dsn, "", "", o.keep)
		if err != nil {
			return nil, err
		}
		defer drop()
		if err := load(ctx, c, o); err != nil {
			return nil, err
		}
		conn = c
	}
	res.Database = conn
	res.LoadS = time.Since(start).Seconds()
	uuids, err := sample(ctx, conn, o.rows)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "%d rows ready in %.1f s\n", o.rows, res.LoadS)

	readers, err := startReaders(ctx, conn, o.readers, o.readRate, uuids)
	if err != nil {
		return nil, err
	}
	defer readers.stop()
	time.Sleep(o.baseline)
	res.Baseline = readers.cut()

	reg, err := registry(o.workers)
	if err != nil {
		return nil, err
	}
	out := lineCounter{verbose: o.verbose, start: time.Now()}
	s := &dbsync.Syncer{Connection: conn, Out: &out, Registry: reg, BatchSize: o.batch}
	start = time.Now()
	err = s.OnlineDataMigrations(ctx, nil, nil)
	res.MigrateS = time.Since(start).Seconds()
	res.During = readers.cut()
	res.Passes, res.MigrateLast = out.passes, out.last
	if err != nil {
		return nil, fmt.Errorf("online data migrations after %.1f s: %w", res.MigrateS, err)
	}
	res.RowsPerS = float64(o.rows) / res.MigrateS
	return res, verify(ctx, conn, o.rows)
}

// database creates a database on dsn's server — named name, or a fresh
// name when name is "" — as a copy of template unless that is "", and
// returns its connection URL and a function dropping it (unless keep).
// When name exists already it returns "" and nothing is done.
func database(ctx context.Context, dsn, name, template string, keep bool) (string, func(), error) {
	u, err := url.Parse(dsn)
	if err != nil || !strings.HasPrefix(u.Scheme, "postgres") {
		return "", nil, fmt.Errorf("--dsn %q: want a postgresql:// URL", dsn)
	}
	admin := *u
	admin.Scheme = "postgres"
	adb, err := sql.Open("pgx", admin.String())
	if err != nil {
		return "", nil, err
	}
	if name == "" {
		b := make([]byte, 4)
		_, _ = crand.Read(b)
		name = "w_perf_a_migbench_" + hex.EncodeToString(b)
	} else {
		var exists bool
		if err := adb.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
			adb.Close()
			return "", nil, err
		}
		if exists {
			adb.Close()
			return "", func() {}, nil
		}
	}
	create := "CREATE DATABASE " + name
	if template != "" {
		create += " TEMPLATE " + template
	}
	if _, err := adb.ExecContext(ctx, create); err != nil {
		adb.Close()
		return "", nil, fmt.Errorf("%s on %s: %w", create, u.Host, err)
	}
	out := *u
	out.Scheme = "postgresql"
	out.Path = "/" + name
	return out.String(), func() {
		defer adb.Close()
		if keep {
			fmt.Fprintf(os.Stderr, "kept database %s\n", name)
			return
		}
		if _, err := adb.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			fmt.Fprintf(os.Stderr, "drop database %s: %v\n", name, err)
		}
	}, nil
}

// load builds the database a 0.1 deployment with o.rows nodes upgraded to
// HEAD's schema would have.
func load(ctx context.Context, conn string, o options) error {
	d, err := db.Open(ctx, conn, db.Options{})
	if err != nil {
		return err
	}
	defer d.Close()
	m, err := migrations.NewMigratorUntil(d, dbtest.Release01Schema)
	if err != nil {
		return err
	}
	if _, err := m.Migrate(ctx, nil); err != nil {
		return fmt.Errorf("schema of release 0.1: %w", err)
	}
	// The template is written as release 0.1's store wrote an enrolled
	// node: Node 1.0, no interface columns (the schema has none yet).
	v10, enroll, power := "1.0", "enroll", "power off"
	n := &db.Node{UUID: "00000000-0000-0000-0000-000000000000", Driver: "ipmi", Version: &v10,
		ProvisionState: &enroll, PowerState: &power,
		DriverInfo:         db.JSONObject{"ipmi_address": "10.0.0.1", "ipmi_username": "admin", "ipmi_password": "secret"},
		Properties:         db.JSONObject{"cpu_arch": "x86_64", "cpus": 32, "memory_mb": 131072, "local_gb": 400},
		Extra:              db.JSONObject{"rack": "r1", "slot": 7},
		DriverInternalInfo: db.JSONObject{}, InstanceInfo: db.JSONObject{}}
	if _, err := d.Bun().NewInsert().Model(n).Column(dbtest.Release01NodeColumns...).Exec(ctx); err != nil {
		return fmt.Errorf("template node: %w", err)
	}
	// Every column of the template but the identity ones is copied.
	var cols []string
	if err := d.Bun().NewRaw(`SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'nodes' ORDER BY ordinal_position`).Scan(ctx, &cols); err != nil {
		return err
	}
	cols = slices.DeleteFunc(cols, func(c string) bool { return c == "id" || c == "uuid" || c == "name" || c == "driver" })
	copied := "t." + strings.Join(cols, ", t.")
	const uuid = `substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' || substr(h, 14, 3) || '-a' || substr(h, 18, 3) || '-' || substr(h, 21, 12)`
	for lo := 1; lo <= o.rows; lo += o.loadChunk {
		hi := min(lo+o.loadChunk-1, o.rows)
		q := fmt.Sprintf(`INSERT INTO nodes (uuid, name, driver, %s)
			SELECT %s, 'node-' || g, (ARRAY['fake-hardware', 'ipmi', 'redfish'])[1 + g %% 3], %s
			FROM (SELECT g, md5(g::text) AS h FROM generate_series(%d, %d) AS g) AS s, nodes AS t WHERE t.uuid = '%s'`,
			strings.Join(cols, ", "), uuid, copied, lo, hi, n.UUID)
		if _, err := d.Bun().ExecContext(ctx, q); err != nil {
			return fmt.Errorf("load rows %d-%d: %w", lo, hi, err)
		}
	}
	if _, err := d.Bun().ExecContext(ctx, "DELETE FROM nodes WHERE uuid = ?", n.UUID); err != nil {
		return err
	}
	// The upgrade to HEAD: the node interface columns arrive NULL.
	m, err = migrations.NewMigrator(d)
	if err != nil {
		return err
	}
	if _, err := m.Migrate(ctx, nil); err != nil {
		return fmt.Errorf("schema of HEAD: %w", err)
	}
	if _, err := d.Bun().ExecContext(ctx, "VACUUM ANALYZE nodes"); err != nil {
		return err
	}
	return nil
}

// sample returns the uuids of about 1% of the nodes, for the readers.
func sample(ctx context.Context, conn string, rows int) ([]string, error) {
	d, err := db.Open(ctx, conn, db.Options{})
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var uuids []string
	q := d.Bun().NewSelect().Table(db.TableNodes).Column("uuid")
	if rows >= 1000 {
		q = q.Where("id % 97 = 0")
	}
	if err := q.Scan(ctx, &uuids); err != nil {
		return nil, err
	}
	if len(uuids) == 0 {
		return nil, fmt.Errorf("no nodes to read")
	}
	return uuids, nil
}

func registry(workers int) (*onlinemigrations.Registry, error) {
	r := &onlinemigrations.Registry{}
	if err := onlinemigrations.Install(r, onlinemigrations.Options{Notes: os.Stderr, Workers: workers}); err != nil {
		return nil, err
	}
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		return nil, err
	}
	latest, err := onlinemigrations.UpdateToLatestVersions(reg, release.Default().Head(), nil)
	if err != nil {
		return nil, err
	}
	return r, r.Register(latest)
}

// verify fails unless every node is at Node 1.1 with its interfaces set.
func verify(ctx context.Context, conn string, rows int) error {
	d, err := db.Open(ctx, conn, db.Options{})
	if err != nil {
		return err
	}
	defer d.Close()
	total, err := d.Bun().NewSelect().Table(db.TableNodes).Count(ctx)
	if err != nil {
		return err
	}
	left, err := d.Bun().NewSelect().Table(db.TableNodes).
		Where("version <> '1.1' OR boot_interface IS NULL OR power_interface IS NULL OR network_interface IS NULL").Count(ctx)
	if err != nil {
		return err
	}
	if int(total) != rows || left != 0 {
		return fmt.Errorf("after the migrations: %d rows (want %d), %d not migrated", total, rows, left)
	}
	return nil
}

// lineCounter counts the passes in the command's output and keeps its last line.
type lineCounter struct {
	passes  int
	last    string
	verbose bool
	start   time.Time
}

func (l *lineCounter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSpace(string(p)), "\n") {
		if strings.HasPrefix(line, onlinemigrations.BackfillNodeInterfacesName+"()") {
			l.passes++
		}
		if line != "" {
			l.last = line
			if l.verbose {
				fmt.Fprintf(os.Stderr, "%7.2f s  %s\n", time.Since(l.start).Seconds(), line)
			}
		}
	}
	return len(p), nil
}

var _ io.Writer = (*lineCounter)(nil)

// readers fetch random nodes until stopped, recording latencies.
type readers struct {
	mu     sync.Mutex
	lat    []time.Duration
	errs   int
	since  time.Time
	done   atomic.Bool
	wg     sync.WaitGroup
	closer func()
}

func startReaders(ctx context.Context, conn string, n int, rate float64, uuids []string) (*readers, error) {
	r := &readers{since: time.Now(), closer: func() {}}
	if n <= 0 {
		return r, nil
	}
	d, err := db.Open(ctx, conn, db.Options{MaxOpenConnections: n, MaxIdleConnections: n})
	if err != nil {
		return nil, err
	}
	r.closer = func() { d.Close() }
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		return nil, err
	}
	s := db.NewStore(d, reg, release.NewPinner(release.Default(), release.Pin{}))
	var every time.Duration // between one reader's GETs
	if rate > 0 {
		every = time.Duration(float64(n) / rate * float64(time.Second))
	}
	for range n {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			next := time.Now()
			for !r.done.Load() && ctx.Err() == nil {
				if every > 0 {
					next = next.Add(every)
					time.Sleep(time.Until(next))
				}
				id := uuids[rand.IntN(len(uuids))]
				t0 := time.Now()
				_, err := s.GetNode(ctx, id)
				el := time.Since(t0)
				r.mu.Lock()
				r.lat = append(r.lat, el)
				if err != nil {
					r.errs++
				}
				r.mu.Unlock()
			}
		}()
	}
	return r, nil
}

// cut returns the figures since the last cut and starts a new period.
func (r *readers) cut() Reads {
	r.mu.Lock()
	defer r.mu.Unlock()
	lat, errs, since := r.lat, r.errs, r.since
	r.lat, r.errs, r.since = nil, 0, time.Now()
	out := Reads{Requests: len(lat), Errors: errs}
	if len(lat) == 0 {
		return out
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	out.Rate = float64(len(lat)) / time.Since(since).Seconds()
	out.P50ms, out.P99ms, out.Maxms = ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100]), ms(lat[len(lat)-1])
	return out
}

func (r *readers) stop() {
	r.done.Store(true)
	r.wg.Wait()
	r.closer()
}
