package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/uptrace/bun"
)

// TestSyncBIOSSettings: syncing keeps created_at of unchanged and changed
// settings, sets updated_at only on changed ones, stores the registry
// fields (a column named "unique" included) and deletes settings no longer
// read; on every dialect.
func TestSyncBIOSSettings(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		st, _ := latestStore(t, dbh)
		n := insertNode(t, dbh, "30000000-0000-0000-0000-0000000000c1")
		s := func(v string) *string { return &v }
		i := func(v int64) *int64 { return &v }
		b := func(v bool) *bool { return &v }
		first := []*objects.BIOSSetting{
			{Name: "Virt", Value: s("Enabled"), AttributeType: s("Enumeration"), AllowableValues: []string{"Enabled", "Disabled"}, ResetRequired: b(true), Unique: b(false)},
			{Name: "Cores", Value: s("0"), AttributeType: s("Integer"), LowerBound: i(0), UpperBound: i(32)},
			{Name: "Gone", Value: s("x")},
		}
		if err := st.SyncBIOSSettings(ctx, n.ID, first); err != nil {
			t.Fatal(err)
		}
		load := func() map[string]*objects.BIOSSetting {
			objs, err := st.LoadAll(ctx, "BIOSSetting", func(q *bun.SelectQuery) *bun.SelectQuery {
				return q.Where("?TableAlias.node_id = ?", n.ID)
			})
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]*objects.BIOSSetting{}
			for _, o := range objs {
				bs := o.(*objects.BIOSSetting)
				out[bs.Name] = bs
			}
			return out
		}
		before := load()
		if v := before["Virt"]; v == nil || v.Unique == nil || *v.Unique || len(v.AllowableValues) != 2 || v.UpdatedAt != nil {
			t.Fatalf("Virt %+v", v)
		}
		if c := before["Cores"]; c.UpperBound == nil || *c.UpperBound != 32 || c.AllowableValues == nil {
			t.Fatalf("Cores %+v (allowable_values should read [] when none)", c)
		}
		time.Sleep(10 * time.Millisecond)
		second := []*objects.BIOSSetting{
			{Name: "Virt", Value: s("Disabled"), AttributeType: s("Enumeration"), AllowableValues: []string{"Enabled", "Disabled"}, ResetRequired: b(true), Unique: b(false)},
			{Name: "Cores", Value: s("0"), AttributeType: s("Integer"), LowerBound: i(0), UpperBound: i(32)},
		}
		if err := st.SyncBIOSSettings(ctx, n.ID, second); err != nil {
			t.Fatal(err)
		}
		after := load()
		if len(after) != 2 || after["Gone"] != nil {
			t.Fatalf("after sync: %v", after)
		}
		if v := after["Virt"]; *v.Value != "Disabled" || v.UpdatedAt == nil || !v.CreatedAt.Equal(before["Virt"].CreatedAt) {
			t.Errorf("changed setting %+v", v)
		}
		if c := after["Cores"]; c.UpdatedAt != nil {
			t.Errorf("an unchanged setting was updated: %+v", c)
		}
	})
}

// TestSyncFirmwareComponents: a component seen first gets its initial
// version; a later read changes only current_version (and updated_at); a
// flashed one records last_version_flashed; components not read again are
// kept, as Ironic keeps them.
func TestSyncFirmwareComponents(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		st, _ := latestStore(t, dbh)
		n := insertNode(t, dbh, "30000000-0000-0000-0000-0000000000d1")
		if err := st.SyncFirmwareComponents(ctx, n.ID, []db.FirmwareReading{{"bios", "1.0"}, {"bmc", "2.0"}}, nil); err != nil {
			t.Fatal(err)
		}
		if err := st.SyncFirmwareComponents(ctx, n.ID, []db.FirmwareReading{{"bios", "1.1"}}, []string{"bios"}); err != nil {
			t.Fatal(err)
		}
		objs, err := st.LoadAll(ctx, "FirmwareComponent", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("?TableAlias.node_id = ?", n.ID).OrderExpr("?TableAlias.component")
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) != 2 {
			t.Fatalf("%d components", len(objs))
		}
		bios, bmc := objs[0].(*objects.FirmwareComponent), objs[1].(*objects.FirmwareComponent)
		if bios.InitialVersion != "1.0" || *bios.CurrentVersion != "1.1" || bios.LastVersionFlashed == nil || *bios.LastVersionFlashed != "1.1" || bios.UpdatedAt == nil {
			t.Errorf("bios %+v", bios)
		}
		if bmc.InitialVersion != "2.0" || *bmc.CurrentVersion != "2.0" || bmc.LastVersionFlashed != nil || bmc.UpdatedAt != nil {
			t.Errorf("bmc %+v", bmc)
		}
	})
}
