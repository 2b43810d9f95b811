package db_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/test/testenv"
)

func TestOpenAcceptedForms(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	pg, my := testenv.RequirePostgres(t), testenv.RequireMySQL(t)
	withScheme := func(raw, scheme string) string {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		u.Scheme = scheme
		return u.String()
	}
	tests := map[string]struct {
		conn string
		want db.Dialect
		file string // SQLite file that must exist afterwards
	}{
		"sqlite memory":   {conn: "sqlite://", want: db.SQLite},
		"sqlite relative": {conn: "sqlite:///rel.db", want: db.SQLite, file: filepath.Join(dir, "rel.db")},
		"sqlite absolute": {conn: "sqlite:///" + filepath.Join(dir, "abs.db"), want: db.SQLite, file: filepath.Join(dir, "abs.db")},
		"postgresql":      {conn: pg, want: db.Postgres},
		"psycopg2":        {conn: withScheme(pg, "postgresql+psycopg2"), want: db.Postgres},
		"postgres":        {conn: withScheme(pg, "postgres"), want: db.Postgres},
		"mysql":           {conn: my, want: db.MySQL},
		"pymysql":         {conn: withScheme(my, "mysql+pymysql") + "?charset=utf8", want: db.MySQL},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dbh, err := db.Open(ctx, tc.conn, db.Options{MaxOpenConnections: 4, ConnectionMaxLifetime: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer dbh.Close()
			if dbh.Dialect() != tc.want {
				t.Errorf("dialect %s, want %s", dbh.Dialect(), tc.want)
			}
			if _, err := dbh.Now(ctx); err != nil {
				t.Error(err)
			}
			if tc.file != "" {
				if _, err := os.Stat(tc.file); err != nil {
					t.Errorf("database file: %v", err)
				}
			}
		})
	}
}

// TestSQLiteSettings: WAL, a busy timeout and foreign keys are on for file
// databases; in-memory databases keep their data across calls (one
// connection).
func TestSQLiteSettings(t *testing.T) {
	ctx := context.Background()
	dbh, err := db.Open(ctx, "sqlite:///"+filepath.Join(t.TempDir(), "s.db"), db.Options{SQLiteBusyTimeout: 7 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer dbh.Close()
	for pragma, want := range map[string]string{"journal_mode": "wal", "busy_timeout": "7000", "foreign_keys": "1"} {
		var got string
		if err := dbh.Bun().QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil || got != want {
			t.Errorf("PRAGMA %s = %q (%v), want %q", pragma, got, err, want)
		}
	}
	mem, err := db.Open(ctx, "sqlite:///:memory:", db.Options{MaxOpenConnections: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if _, err := mem.Bun().ExecContext(ctx, "CREATE TABLE t (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	if ok, err := mem.HasTable(ctx, "t"); err != nil || !ok {
		t.Errorf("in-memory table vanished between calls: %v %v", ok, err)
	}
}

// TestOpenErrors: every failure is one line naming the problem and the URL
// with its password masked.
func TestOpenErrors(t *testing.T) {
	tests := map[string]struct {
		conn string
		want []string
	}{
		"unreachable postgres": {"postgresql://u:s3cret@127.0.0.1:1/x", []string{"postgresql://u:***@127.0.0.1:1/x", "cannot connect"}},
		"unreachable mysql":    {"mysql://u:s3cret@127.0.0.1:1/x", []string{"mysql://u:***@127.0.0.1:1/x", "cannot connect"}},
		"unknown scheme":       {"oracle://u:s3cret@db/x", []string{"oracle://u:***@db/x", "unknown dialect"}},
		"malformed":            {"postgresql://u:s3cret@[::1/x", []string{"malformed URL"}},
		"sqlite missing dir":   {"sqlite:////nonexistent-rivet-dir/x.db", []string{"cannot open /nonexistent-rivet-dir/x.db"}},
		"mysql no database":    {"mysql://u:s3cret@127.0.0.1:1/", []string{"database name"}},
		"mysql unknown param":  {"mysql://u:s3cret@127.0.0.1:1/x?ssl_ca=/x", []string{`unsupported MySQL URL parameter "ssl_ca"`}},
		"postgres bad param":   {"postgresql://u:s3cret@127.0.0.1:1/x?sslmode=sometimes", []string{"malformed PostgreSQL URL"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dbh, err := db.Open(context.Background(), tc.conn, db.Options{ConnectTimeout: 3 * time.Second})
			if err == nil {
				dbh.Close()
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "s3cret") || strings.Contains(msg, "\n") {
				t.Errorf("error leaks the password or spans lines: %q", msg)
			}
		})
	}
}
