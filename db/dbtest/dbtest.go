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

// Release01NodeColumns are the columns of release 0.1's nodes table that
// its store wrote (all but id and the lease columns): a test writing a row
// as 0.1 did names them, since db.Node maps the columns of every later
// release too. 0.1's schema is frozen, so this list never changes.
var Release01NodeColumns = []string{"uuid", "name", "chassis_id", "driver", "driver_info", "driver_internal_info",
	"extra", "instance_info", "properties", "clean_step", "raid_config", "target_raid_config", "instance_uuid",
	"last_error", "maintenance", "maintenance_reason", "power_state", "target_power_state", "provision_state",
	"target_provision_state", "provision_updated_at", "inspection_started_at", "inspection_finished_at",
	"network_interface", "resource_class", "console_enabled", "conductor_affinity", "conductor_group",
	"created_at", "updated_at", "version"}

// Release02NodeColumns are release 0.2's: 0.1's and the node's interfaces.
var Release02NodeColumns = append(append([]string(nil), Release01NodeColumns...), "boot_interface",
	"console_interface", "deploy_interface", "inspect_interface", "management_interface", "power_interface",
	"raid_interface", "vendor_interface")
