package db_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/uptrace/bun"
)

// TestReplaceBIOSSettings: replacing a node's BIOS settings leaves exactly
// the new set (at BIOSSetting 1.0), touches no other node's, an empty set
// clears them, (node_id, name) is unique, and the node's deletion takes
// its settings with it.
func TestReplaceBIOSSettings(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		st, _ := latestStore(t, dbh)
		n := insertNode(t, dbh, "30000000-0000-0000-0000-0000000000b1")
		other := insertNode(t, dbh, "30000000-0000-0000-0000-0000000000b2")
		s := func(v string) *string { return &v }
		if err := st.ReplaceBIOSSettings(ctx, other.ID, map[string]*string{"Boot": s("Uefi")}); err != nil {
			t.Fatal(err)
		}
		if err := st.ReplaceBIOSSettings(ctx, n.ID, map[string]*string{"A": s("1"), "B": s("2")}); err != nil {
			t.Fatal(err)
		}
		if err := st.ReplaceBIOSSettings(ctx, n.ID, map[string]*string{"B": s("3"), "C": nil}); err != nil {
			t.Fatal(err)
		}
		load := func(id int64) map[string]any {
			objs, err := st.LoadAll(ctx, "BIOSSetting", func(q *bun.SelectQuery) *bun.SelectQuery {
				return q.Where("?TableAlias.node_id = ?", id)
			})
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]any{}
			for _, o := range objs {
				b := o.(*objects.BIOSSetting)
				if b.NodeID != id || b.CreatedAt.IsZero() || time.Since(b.CreatedAt) > time.Hour {
					t.Errorf("setting %s: node %d created %v", b.Name, b.NodeID, b.CreatedAt)
				}
				if b.Value == nil {
					out[b.Name] = nil
				} else {
					out[b.Name] = *b.Value
				}
			}
			return out
		}
		if diff := cmp.Diff(map[string]any{"B": "3", "C": nil}, load(n.ID)); diff != "" {
			t.Errorf("settings after replace (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]any{"Boot": "Uefi"}, load(other.ID)); diff != "" {
			t.Errorf("other node's settings (-want +got):\n%s", diff)
		}
		var versions []string
		if err := dbh.Bun().NewSelect().Table(db.TableBIOSSettings).Column("version").Where("node_id = ?", n.ID).
			Scan(ctx, &versions); err != nil {
			t.Fatal(err)
		}
		sort.Strings(versions)
		if diff := cmp.Diff([]string{"1.0", "1.0"}, versions); diff != "" {
			t.Errorf("row versions (-want +got):\n%s", diff)
		}
		dup := &db.BIOSSetting{NodeID: n.ID, Name: "B"}
		if _, err := dbh.Bun().NewInsert().Model(dup).Exec(ctx); !db.IsUniqueViolation(err) {
			t.Errorf("a second setting B of the node: %v, want a unique violation", err)
		}
		if err := st.ReplaceBIOSSettings(ctx, other.ID, nil); err != nil {
			t.Fatal(err)
		}
		if got := load(other.ID); len(got) != 0 {
			t.Errorf("settings after an empty replace: %v", got)
		}
		epoch, err := dbh.AcquireLease(ctx, n.UUID, "me", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := dbh.DestroyNodeFenced(ctx, n.ID, "me", epoch); err != nil {
			t.Fatal(err)
		}
		if left, err := dbh.Bun().NewSelect().Table(db.TableBIOSSettings).Where("node_id = ?", n.ID).Count(ctx); err != nil || left != 0 {
			t.Errorf("bios settings left after destroy: %d, %v", left, err)
		}
	})
}
