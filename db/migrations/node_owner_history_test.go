package migrations_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/db/migrations"
)

// release02Schema is the last schema migration release 0.2 shipped.
const release02Schema = "20261215000000_node_interfaces"

// The 0.3 migrations land on a database as release 0.2 left it: its nodes
// stay at their version with no owner or lessee, and node_history starts
// empty, without a foreign key, so a node a 0.2 conductor deletes (it
// knows nothing of history) goes even when history rows name it.
func TestNodeOwnerAndHistoryMigrationOn02Rows(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.OpenEmpty(t, d)
		dbtest.MigrateUntil(t, dbh, release02Schema)
		v11 := "1.1"
		var ids []int64
		for i := range 2 {
			n := &db.Node{UUID: fmt.Sprintf("40000000-0000-0000-0000-%012d", i), Driver: "ipmi", Version: &v11}
			q := dbh.Bun().NewInsert().Model(n).Column(dbtest.Release02NodeColumns...).Returning("id")
			if _, err := q.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, n.ID)
		}
		m, err := migrations.NewMigrator(dbh)
		if err != nil {
			t.Fatal(err)
		}
		applied, err := m.Migrate(ctx, nil)
		// Every 0.3 migration runs; these two among them.
		if err != nil || !slices.Contains(applied, "20270105000000_node_owner_lessee") || !slices.Contains(applied, "20270105000100_node_history") {
			t.Fatalf("applied %v, %v", applied, err)
		}
		var rows []db.Node
		if err := dbh.Bun().NewSelect().Model(&rows).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Owner != nil || r.Lessee != nil || *r.Version != "1.1" {
				t.Fatalf("row after the migration: owner %v, lessee %v, version %s", r.Owner, r.Lessee, *r.Version)
			}
		}
		v10 := "1.0"
		h := &db.NodeHistory{UUID: "50000000-0000-0000-0000-000000000001", NodeID: ids[0], Version: &v10}
		if _, err := dbh.Bun().NewInsert().Model(h).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		// As a 0.2 conductor deletes a node: ports, portgroups, the node.
		if _, err := dbh.Bun().NewDelete().Table(db.TableNodes).Where("id = ?", ids[0]).Exec(ctx); err != nil {
			t.Fatalf("a 0.2-style node delete with history rows left: %v", err)
		}
		// The clean-up drops the orphan.
		if n, err := dbh.PruneNodeHistory(ctx, 300, 0); err != nil || n != 1 {
			t.Fatalf("PruneNodeHistory = %d, %v; want the orphan deleted", n, err)
		}
	})
}
