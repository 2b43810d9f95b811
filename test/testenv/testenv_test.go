package testenv

import (
	"context"
	"database/sql"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// These tests prove the gates work on this machine: under CI=true each of them
// must find its service, so a CI that forgot to start one goes red here first.

func TestRequirePostgresGivesEmptyPrivateDatabase(t *testing.T) {
	dsn := RequirePostgres(t)
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "postgresql" || !strings.HasPrefix(u.Path, "/rivet_t_") {
		t.Fatalf("dsn %q: %v", dsn, err)
	}
	u.Scheme = "postgres"
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(context.Background(),
		"SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("fresh database has %d tables", n)
	}
}

func TestRequireMySQLGivesEmptyPrivateDatabase(t *testing.T) {
	dsn := RequireMySQL(t)
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "mysql" || !strings.HasPrefix(u.Path, "/rivet_t_") {
		t.Fatalf("dsn %q: %v", dsn, err)
	}
	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr, cfg.User, cfg.DBName = "tcp", u.Host, u.User.Username(), strings.TrimPrefix(u.Path, "/")
	cfg.Passwd, _ = u.User.Password()
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(context.Background(),
		"SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE()").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("fresh database has %d tables", n)
	}
}

func TestRequireIPMISimRuns(t *testing.T) {
	p := RequireIPMISim(t)
	// ipmi_sim has no --version; an unknown option makes it print usage and
	// exit non-zero, which proves the binary runs here.
	out, _ := exec.Command(p, "--no-such-option").CombinedOutput()
	if len(out) == 0 {
		t.Fatalf("%s printed nothing", p)
	}
	RequireIPMITool(t)
}

func TestRequireShared(t *testing.T) {
	RequireShared(t)
}

// A private server keeps its data across a stop and a start on the same
// port, and refuses connections while stopped.
func TestPostgresServerStopStart(t *testing.T) {
	s := StartPostgresServer(t)
	u, _ := url.Parse(s.URL)
	u.Scheme = "postgres"
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE kept (v int); INSERT INTO kept VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	s.Stop(t)
	if err := db.PingContext(ctx); err == nil {
		t.Fatal("ping succeeded while the server was stopped")
	}
	s.Start(t)
	var v int
	if err := db.QueryRowContext(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != 7 {
		t.Fatalf("after restart: v=%d err=%v", v, err)
	}
}
