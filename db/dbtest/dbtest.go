package dbtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/migrations"
	"github.com/rivetmetal/rivet/test/testenv"
)

// Connection returns the [database] connection URL of a fresh, empty
// database of dialect d.
func Connection(t testing.TB, d db.Dialect) string {
	t.Helper()
	switch d {
	case db.Postgres:
		return testenv.RequirePostgres(t)
	case db.MySQL:
		return testenv.RequireMySQL(t)
	case db.SQLite:
		return "sqlite:///" + filepath.Join(t.TempDir(), "rivet.db")
	}
	t.Fatalf("dbtest: unknown dialect %q", d)
	return ""
}

// OpenEmpty opens a fresh, empty database of dialect d, closed at cleanup.
func OpenEmpty(t testing.TB, d db.Dialect) *db.DB {
	t.Helper()
	conn := Connection(t, d)
	dbh, err := db.Open(context.Background(), conn, db.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", d, err)
	}
	t.Cleanup(func() { dbh.Close() })
	return dbh
}

// Open opens a fresh database of dialect d with every migration applied.
func Open(t testing.TB, d db.Dialect) *db.DB {
	t.Helper()
	dbh := OpenEmpty(t, d)
	m, err := migrations.NewMigrator(dbh)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(context.Background(), nil); err != nil {
		t.Fatalf("migrate %s: %v", d, err)
	}
	return dbh
}

// ForEachDialect runs fn as a parallel subtest per dialect, named after it.
func ForEachDialect(t *testing.T, fn func(t *testing.T, d db.Dialect)) {
	t.Helper()
	for _, d := range db.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, d)
		})
	}
}

// Release01Schema is the last schema migration release 0.1 shipped.
const Release01Schema = "20261122080000_finalized_release"

// MigrateUntil applies dbh's migrations up to and including last (e.g.
// Release01Schema): the schema an older release left, to upgrade from.
func MigrateUntil(t testing.TB, dbh *db.DB, last string) {
	t.Helper()
	m, err := migrations.NewMigratorUntil(dbh, last)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(context.Background(), nil); err != nil {
		t.Fatalf("migrate %s until %s: %v", dbh.Dialect(), last, err)
	}
}
