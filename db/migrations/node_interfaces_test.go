package migrations_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/db/migrations"
)

// The 0.2 migration lands on a database as release 0.1 left it: its rows
// stay, with NULL in the new interface columns, still at Node 1.0, for the
// backfill_node_interfaces online migration to fill.
func TestNodeInterfacesMigrationOn01Rows(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.OpenEmpty(t, d)
		dbtest.MigrateUntil(t, dbh, dbtest.Release01Schema)
		v10 := "1.0"
		for i := range 3 {
			n := &db.Node{UUID: fmt.Sprintf("30000000-0000-0000-0000-%012d", i), Driver: "ipmi", Version: &v10}
			// Only 0.1's columns: the model has those of every later release.
			q := dbh.Bun().NewInsert().Model(n).Column(dbtest.Release01NodeColumns...)
			if _, err := q.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		m, err := migrations.NewMigrator(dbh)
		if err != nil {
			t.Fatal(err)
		}
		applied, err := m.Migrate(ctx, nil)
		// Later releases' migrations run too; node_interfaces comes first.
		if err != nil || len(applied) == 0 || applied[0] != "20261215000000_node_interfaces" {
			t.Fatalf("applied %v, %v", applied, err)
		}
		var rows []db.Node
		if err := dbh.Bun().NewSelect().Model(&rows).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 3 {
			t.Fatalf("%d rows after the migration", len(rows))
		}
		for _, r := range rows {
			if r.BootInterface != nil || r.VendorInterface != nil || *r.Version != "1.0" {
				t.Fatalf("row after the migration: boot %v, vendor %v, version %s", r.BootInterface, r.VendorInterface, *r.Version)
			}
		}
	})
}
