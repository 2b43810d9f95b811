package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // PostgreSQL driver for the suite's private databases
)

// defaultPostgresDSN is the server the suite uses when neither
// RIVET_BENCH_POSTGRES_DSN nor RIVET_TEST_POSTGRES_DSN is set.
const defaultPostgresDSN = "postgresql://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// postgresDSN is the server the suite creates its databases on, and the
// variable it came from (for error messages).
func postgresDSN() (dsn, from string) {
	for _, k := range []string{"RIVET_BENCH_POSTGRES_DSN", "RIVET_TEST_POSTGRES_DSN"} {
		if v := os.Getenv(k); v != "" {
			return v, k
		}
	}
	return defaultPostgresDSN, "the default"
}

// server is a PostgreSQL server the suite may create databases on.
type server struct {
	base *url.URL
	from string
	db   *sql.DB
}

func openServer(ctx context.Context) (*server, error) {
	dsn, from := postgresDSN()
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgresql" && u.Scheme != "postgres") {
		return nil, fmt.Errorf("PostgreSQL DSN from %s is not a postgresql:// URL: %q", from, dsn)
	}
	admin := *u
	admin.Scheme = "postgres"
	db, err := sql.Open("pgx", admin.String())
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = db.PingContext(pctx)
		cancel()
	}
	if err != nil {
		if db != nil {
			db.Close()
		}
		return nil, fmt.Errorf("PostgreSQL at %s (from %s) is unreachable: %v; start PostgreSQL or point RIVET_BENCH_POSTGRES_DSN at a server where this user may CREATE DATABASE", u.Host, from, err)
	}
	return &server{base: u, from: from, db: db}, nil
}

// createDatabase makes a fresh database and returns its name and the
// [database] connection URL of it.
func (s *server) createDatabase(ctx context.Context) (name, conn string, err error) {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	name = "rivet_bench_" + hex.EncodeToString(b)
	if _, err := s.db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", "", fmt.Errorf("create database %s on %s (from %s): %w; RIVET_BENCH_POSTGRES_DSN must name a user allowed to CREATE DATABASE", name, s.base.Host, s.from, err)
	}
	u := *s.base
	u.Scheme = "postgresql"
	u.Path = "/" + name
	return name, u.String(), nil
}

func (s *server) dropDatabase(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := s.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	return err
}

// build compiles rivet and the fake driver plugin from the working tree
// into dir.
func build(ctx context.Context, dir string) error {
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+string(filepath.Separator), "./cmd/rivet", "./cmd/rivet-driver-fake")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build in %s: %v\n%s", root, err, out)
	}
	return nil
}

// moduleRoot is the directory of the rivet module the suite runs from.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", errors.New("run the suite from the rivet checkout (go run ./test/bench suite): no go.mod found")
	}
	return filepath.Dir(gomod), nil
}

// deployment is one database, one rivet api and one rivet conductor.
type deployment struct {
	srv     *server
	bin     string
	dir     string
	dbName  string
	cfg     deployConfig
	conf    string
	api     *proc
	cond    *proc
	apiURL  string
	started time.Time
}

// up creates the database, runs dbsync upgrade and starts the conductor
// and the API, waiting until the API lists the fake-hardware driver (a
// live conductor serves it).
func up(ctx context.Context, srv *server, bin, dir string, cfg deployConfig) (*deployment, error) {
	d := &deployment{srv: srv, bin: bin, dir: dir, cfg: cfg}
	name, conn, err := srv.createDatabase(ctx)
	if err != nil {
		return nil, err
	}
	d.dbName = name
	ok := false
	defer func() {
		if !ok {
			d.down()
		}
	}()
	d.cfg.dbURL = conn
	d.cfg.pluginDir = bin
	if d.cfg.apiPort, err = freePort(); err != nil {
		return nil, err
	}
	if d.cfg.rpcPort, err = freePort(); err != nil {
		return nil, err
	}
	d.conf = filepath.Join(dir, name+".conf")
	if err := writeFile(d.conf, serviceConfig(d.cfg)); err != nil {
		return nil, err
	}
	rivet := filepath.Join(bin, "rivet")
	sync := exec.CommandContext(ctx, rivet, "--config-file", d.conf, "dbsync", "upgrade")
	if out, err := sync.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("rivet dbsync upgrade: %v\n%s", err, out)
	}
	if cfg.allInOne {
		// d.api is the one process; d.cond stays nil.
		if d.api, err = startProc(dir, name+"-all-in-one", rivet, "--config-file", d.conf, "all-in-one"); err != nil {
			return nil, err
		}
	} else {
		if d.cond, err = startProc(dir, name+"-conductor", rivet, "--config-file", d.conf, "conductor"); err != nil {
			return nil, err
		}
		if d.api, err = startProc(dir, name+"-api", rivet, "--config-file", d.conf, "api"); err != nil {
			return nil, err
		}
	}
	d.apiURL = fmt.Sprintf("http://127.0.0.1:%d", d.cfg.apiPort)
	if err := waitReady(ctx, d.apiURL, d.procs(), time.Minute); err != nil {
		return nil, err
	}
	d.started = time.Now()
	ok = true
	return d, nil
}

// procs are the deployment's processes.
func (d *deployment) procs() []*proc {
	var out []*proc
	for _, p := range []*proc{d.cond, d.api} {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// waitReady waits until GET /v1/drivers at url lists fake-hardware (a live
// conductor serves it), failing early when one of procs exits.
func waitReady(ctx context.Context, url string, procs []*proc, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	hc := &http.Client{Timeout: 5 * time.Second}
	for {
		for _, p := range procs {
			if p.exited() {
				return fmt.Errorf("%s exited at start: %v\n%s", p.name, p.err, p.tail(30))
			}
		}
		if fakeListed(ctx, hc, url) {
			return nil
		}
		if time.Now().After(deadline) {
			var tails strings.Builder
			for _, p := range procs {
				fmt.Fprintf(&tails, "\n%s:\n%s", p.name, p.tail(20))
			}
			return fmt.Errorf("API at %s did not list fake-hardware within %v%s", url, limit, tails.String())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func fakeListed(ctx context.Context, hc *http.Client, url string) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/drivers", nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.26")
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var body struct {
		Drivers []struct {
			Name string `json:"name"`
		} `json:"drivers"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil {
		return false
	}
	for _, dr := range body.Drivers {
		if dr.Name == "fake-hardware" {
			return true
		}
	}
	return false
}

// memory reads the RSS of the API, the conductor and, summed, the
// conductor's children (the driver plugins).
func (d *deployment) memory() (api, cond, plugins Memory, nPlugins int, err error) {
	if api, err = memoryOf(d.api.pid()); err != nil {
		return
	}
	if cond, err = memoryOf(d.cond.pid()); err != nil {
		return
	}
	for _, pid := range children(d.cond.pid()) {
		m, merr := memoryOf(pid)
		if merr != nil {
			continue // exited meanwhile
		}
		plugins = plugins.Add(m)
		nPlugins++
	}
	return
}

// down stops the services (SIGTERM, then the process group is killed)
// and drops the database. It is safe to call more than once.
func (d *deployment) down() []error {
	var errs []error
	for _, p := range []*proc{d.api, d.cond} {
		if p == nil {
			continue
		}
		if err := p.stop(20 * time.Second); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
		}
	}
	d.api, d.cond = nil, nil
	if d.dbName != "" {
		if err := d.srv.dropDatabase(d.dbName); err != nil {
			errs = append(errs, fmt.Errorf("drop database %s: %w", d.dbName, err))
		}
		d.dbName = ""
	}
	return errs
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
