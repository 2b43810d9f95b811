package migrations_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/db/migrations"
)

// beforeOwnerLessee is the migration before this branch's first one:
// the schema its migrations land on (0.2's and the other 0.3 ones).
func beforeOwnerLessee(t *testing.T, d db.Dialect) string {
	t.Helper()
	set, err := migrations.Set(d)
	if err != nil {
		t.Fatal(err)
	}
	prev := ""
	for _, m := range set.Sorted() {
		if m.String() == "20270105000000_node_owner_lessee" {
			return prev
		}
		prev = m.String()
	}
	t.Fatal("no 20270105000000_node_owner_lessee migration")
	return ""
}

// The owner/lessee and history migrations land on a database as the
// migrations before them left it: its nodes stay at their version with no
// owner or lessee, and node_history starts
// empty, without a foreign key, so a node a 0.2 conductor deletes (it
// knows nothing of history) goes even when history rows name it.
func TestNodeOwnerAndHistoryMigrationOn02Rows(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.OpenEmpty(t, d)
		dbtest.MigrateUntil(t, dbh, beforeOwnerLessee(t, d))
		v11 := "1.1"
		var ids []int64
		for i := range 2 {
			n := &db.Node{UUID: fmt.Sprintf("40000000-0000-0000-0000-%012d", i), Driver: "ipmi", Version: &v11}
			// Only 0.1's columns: the model has owner and lessee too.
			q := dbh.Bun().NewInsert().Model(n).Column(release01NodeColumns...).Returning("id")
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
		if err != nil || len(applied) < 2 || applied[0] != "20270105000000_node_owner_lessee" || applied[1] != "20270105000100_node_history" {
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
