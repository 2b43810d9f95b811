package db_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/objects"
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
				listed, terr := s.ListNodes(ctx, q, nil)
				slow, serr := s.ListNodesBun(ctx, q)
				typed := nodesOf(t, listed, false)
				if fmt.Sprint(terr) != fmt.Sprint(serr) {
					t.Fatalf("%s: errors differ: typed %v, bun %v", name, terr, serr)
				}
				if terr != nil {
					return
				}
				if want >= 0 && len(typed) != want {
					t.Fatalf("%s: %d nodes, want %d", name, len(typed), want)
				}
				// ListNodes's nodes are read-only: no snapshot, and no save.
				for i, n := range typed {
					if !n.Changes().ReadOnly() || n.Changes().HasSnapshot() {
						t.Fatalf("%s: node %d: read-only %v, snapshot %v; want read-only without one",
							name, i, n.Changes().ReadOnly(), n.Changes().HasSnapshot())
					}
					if err := s.Save(ctx, n); !errors.Is(err, objects.ErrReadOnly) {
						t.Fatalf("%s: node %d: Save = %v, want ErrReadOnly", name, i, err)
					}
					if c, err := reg.Copy(n); err != nil || !c.Changes().ReadOnly() {
						t.Fatalf("%s: node %d: a copy of a read-only node can be saved (%v)", name, i, err)
					}
					*n.Changes() = objects.ChangeSet{}
					*slow[i].Changes() = objects.ChangeSet{}
				}
				if diff := cmp.Diff(slow, typed, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
					t.Fatalf("%s: typed read differs (-bun +typed):\n%s", name, diff)
				}
				if !reflect.DeepEqual(slow, typed) {
					t.Fatalf("%s: typed read differs (time zones?):\nbun   %+v\ntyped %+v", name, slow, typed)
				}
				// Every document kept raw, then decoded: the same nodes.
				listed, err := s.ListNodes(ctx, q, func(string, string) bool { return true })
				if err != nil {
					t.Fatalf("%s: with raw documents: %v", name, err)
				}
				raw := 0
				for _, n := range listed {
					for _, d := range n.Raw {
						var m db.JSONObject
						if err := m.Scan(d.JSON); err != nil {
							t.Fatal(err)
						}
						if err := reg.Set(n.Node, d.Field, map[string]any(m)); err != nil {
							t.Fatal(err)
						}
						raw++
					}
					*n.Node.Changes() = objects.ChangeSet{}
				}
				if diff := cmp.Diff(slow, nodesOf(t, listed, true), cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
					t.Fatalf("%s: read with raw documents differs (-bun +raw, decoded):\n%s", name, diff)
				}
				if len(listed) > 0 && raw == 0 {
					t.Fatalf("%s: no document kept raw", name)
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
			if _, err := s.ListNodes(ctx, queries[0].q, nil); err == nil {
				t.Fatal("a row without a version was read")
			}
			if _, err := dbh.Bun().NewDelete().Model(noVersion).WherePK().Exec(ctx); err != nil {
				t.Fatal(err)
			}
			insert(variedNodeRow(98, "1.99"))
			compare(t, "a row of a future version", queries[0].q, -1)
			if _, err := s.ListNodes(ctx, queries[0].q, nil); err == nil {
				t.Fatal("a row of an unknown version was read")
			}
		})
	}
}

// nodesOf returns the nodes of a list, read with raw documents or not.
func nodesOf(t *testing.T, listed []db.ListedNode, raw bool) []*objects.Node {
	t.Helper()
	out := make([]*objects.Node, len(listed))
	for i, n := range listed {
		if !raw && n.Raw != nil {
			t.Fatalf("node %d: raw documents %v without keep", i, n.Raw)
		}
		out[i] = n.Node
	}
	return out
}
