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

// With several chunks in flight a Walker still migrates exactly its budget,
// lowest ids first, and a call under budget has visited every row.
func TestWalkerWorkers(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		for i := range 40 {
			n := &db.Node{UUID: fmt.Sprintf("41000000-0000-0000-0000-%012d", i), Driver: "fake-hardware"}
			if i%5 == 0 {
				rc := "done"
				n.ResourceClass = &rc // does not match: the walk skips it
			}
			if _, err := dbh.Bun().NewInsert().Model(n).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		where := Expr{SQL: "resource_class IS NULL"}
		set := Expr{SQL: "resource_class = ?", Args: []any{"gpu"}}
		workers := 4
		if d == db.SQLite {
			workers = 1
		}
		w := &Walker{Workers: workers}
		for _, step := range []struct{ max, want int }{{10, 10}, {7, 7}, {100, 15}, {100, 0}} {
			got, err := w.Update(ctx, dbh, db.TableNodes, where, set, step.max, 3)
			if err != nil || got != step.want {
				t.Fatalf("Update(max %d) = %d, %v; want %d", step.max, got, err, step.want)
			}
			if step.max != 10 {
				continue
			}
			// The first call took the ten lowest matching ids.
			var ids []int64
			if err := dbh.Bun().NewSelect().Table(db.TableNodes).Column("id").Where("resource_class = 'gpu'").
				OrderExpr("id").Scan(ctx, &ids); err != nil {
				t.Fatal(err)
			}
			var want []int64
			for i := int64(1); len(want) < 10; i++ {
				if (i-1)%5 != 0 {
					want = append(want, i)
				}
			}
			if fmt.Sprint(ids) != fmt.Sprint(want) {
				t.Fatalf("migrated ids %v, want %v", ids, want)
			}
		}
		left, err := dbh.Bun().NewSelect().Table(db.TableNodes).Where(where.SQL).Count(ctx)
		if err != nil || left != 0 {
			t.Fatalf("%d rows left, %v", left, err)
		}
	})
}
