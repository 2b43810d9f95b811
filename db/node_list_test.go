package db_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/db"
	"github.com/uptrace/bun"
)

// TestListNodesMatchesLoadAll holds ListNodes's scan equal to LoadAll's
// (bun's reflective scanner) on every dialect: rows with every column NULL
// or set in turn, a NULL provision_state, rows at every Node version, in
// several orders, filtered and limited, none found, and the same errors
// for a row without a version and one at a version this release does not
// know.
func TestListNodesMatchesLoadAll(t *testing.T) {
	for _, d := range db.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			s, dbh, rows, insert := typedScanFixture(t, d)
			reg, ctx := s.Registry(), context.Background()
			for _, row := range rows {
				insert(row)
			}
			type query = func(*bun.SelectQuery) *bun.SelectQuery
			compare := func(t *testing.T, name string, q query, want int) {
				t.Helper()
				typed, terr := s.ListNodes(ctx, q)
				slow, serr := s.ListNodesBun(ctx, q)
				if fmt.Sprint(terr) != fmt.Sprint(serr) {
					t.Fatalf("%s: errors differ: typed %v, bun %v", name, terr, serr)
				}
				if terr != nil {
					return
				}
				if want >= 0 && len(typed) != want {
					t.Fatalf("%s: %d nodes, want %d", name, len(typed), want)
				}
				if diff := cmp.Diff(slow, typed, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
					t.Fatalf("%s: typed read differs (-bun +typed):\n%s", name, diff)
				}
				if !reflect.DeepEqual(slow, typed) {
					t.Fatalf("%s: typed read differs (time zones?):\nbun   %+v\ntyped %+v", name, slow, typed)
				}
				for i := range typed {
					sc, _ := reg.Changed(slow[i])
					tc, _ := reg.Changed(typed[i])
					if !reflect.DeepEqual(sc, tc) {
						t.Fatalf("%s: node %d: changes differ: bun %v, typed %v", name, i, sc, tc)
					}
				}
			}
			queries := []struct {
				name string
				q    query
				want int
			}{
				{"all by id", func(q *bun.SelectQuery) *bun.SelectQuery { return q.OrderExpr("?TableAlias.id ASC") }, len(rows)},
				{"by name desc, limited", func(q *bun.SelectQuery) *bun.SelectQuery {
					return q.OrderExpr("(?TableAlias.name IS NULL) DESC").OrderExpr("?TableAlias.name DESC").
						OrderExpr("?TableAlias.id DESC").Limit(7)
				}, 7},
				{"filtered", func(q *bun.SelectQuery) *bun.SelectQuery {
					return q.Where("?TableAlias.maintenance = ?", true).OrderExpr("?TableAlias.id ASC")
				}, -1},
				{"after a marker", func(q *bun.SelectQuery) *bun.SelectQuery {
					return q.Where("?TableAlias.id > ?", rows[len(rows)/2].ID).OrderExpr("?TableAlias.id ASC").Limit(5)
				}, 5},
				{"none", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.uuid = ?", "none") }, 0},
			}
			for _, tc := range queries {
				compare(t, tc.name, tc.q, tc.want)
			}
			noVersion := variedNodeRow(97, "1.0")
			noVersion.Version = nil
			insert(noVersion)
			compare(t, "a row without a version", queries[0].q, -1)
			if _, err := s.ListNodes(ctx, queries[0].q); err == nil {
				t.Fatal("a row without a version was read")
			}
			if _, err := dbh.Bun().NewDelete().Model(noVersion).WherePK().Exec(ctx); err != nil {
				t.Fatal(err)
			}
			insert(variedNodeRow(98, "1.99"))
			compare(t, "a row of a future version", queries[0].q, -1)
			if _, err := s.ListNodes(ctx, queries[0].q); err == nil {
				t.Fatal("a row of an unknown version was read")
			}
		})
	}
}
