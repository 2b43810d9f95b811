package onlinemigrations

import (
	"context"
	"fmt"
	"testing"

	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// A Walker goes on where its last call stopped and, reaching the end of
// the table with budget left, goes round to the rows before that point:
// a row that needs the migration again behind the walk is still migrated
// by a call that ends under its budget.
func TestWalkerGoesRound(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		for i := range 6 {
			n := &db.Node{UUID: fmt.Sprintf("40000000-0000-0000-0000-%012d", i), Driver: "fake-hardware"}
			if _, err := dbh.Bun().NewInsert().Model(n).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		where := Expr{SQL: "resource_class IS NULL"}
		set := Expr{SQL: "resource_class = ?", Args: []any{"gpu"}}
		w := new(Walker)
		step := func(maxCount, want int) {
			t.Helper()
			got, err := w.Update(ctx, dbh, db.TableNodes, where, set, maxCount, 3)
			if err != nil || got != want {
				t.Fatalf("Update(max %d) = %d, %v; want %d", maxCount, got, err, want)
			}
		}
		step(4, 4) // rows 1-4, in a chunk of 3 and one of 1
		// Row 2, behind the walk, needs the migration again.
		if _, err := dbh.Bun().NewUpdate().Table(db.TableNodes).Set("resource_class = NULL").
			Where("uuid = ?", "40000000-0000-0000-0000-000000000001").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		step(10, 3) // rows 5 and 6, then round to row 2
		step(10, 0)
		left, err := dbh.Bun().NewSelect().Table(db.TableNodes).Where(where.SQL).Count(ctx)
		if err != nil || left != 0 {
			t.Fatalf("%d rows left, %v", left, err)
		}
	})
}
