package db_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// PowerSyncNodes lists the nodes of a group (case-insensitive) and drivers
// in id order, with the columns power-state sync reads filled in.
func TestPowerSyncNodes(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		on, holder := "power on", "cond-1"
		for _, n := range []*db.Node{
			{UUID: "00000000-0000-0000-0000-000000000001", Driver: "ipmi", ConductorGroup: "Rack1",
				DriverInfo: db.JSONObject{"ipmi_address": "10.0.0.1", "ipmi_port": "623"}, PowerState: &on},
			{UUID: "00000000-0000-0000-0000-000000000002", Driver: "fake-hardware", ConductorGroup: "rack1",
				Maintenance: true, Reservation: &holder},
			{UUID: "00000000-0000-0000-0000-000000000003", Driver: "redfish", ConductorGroup: "rack1"}, // driver not served
			{UUID: "00000000-0000-0000-0000-000000000004", Driver: "ipmi", ConductorGroup: ""},         // other group
		} {
			if _, err := dbh.Bun().NewInsert().Model(n).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		got, err := listPowerSync(ctx, dbh, "RACK1", []string{"ipmi", "fake-hardware"})
		if err != nil {
			t.Fatal(err)
		}
		type view struct {
			UUID, Driver, Group string
			Info                db.JSONObject
			Power, Reservation  *string
			Maintenance         bool
		}
		var views []view
		for _, n := range got {
			if n.ID == 0 {
				t.Errorf("node %s: id not read", n.UUID)
			}
			views = append(views, view{n.UUID, n.Driver, n.ConductorGroup, n.DriverInfo, n.PowerState, n.Reservation, n.Maintenance})
		}
		want := []view{
			{"00000000-0000-0000-0000-000000000001", "ipmi", "Rack1", db.JSONObject{"ipmi_address": "10.0.0.1", "ipmi_port": "623"}, &on, nil, false},
			{"00000000-0000-0000-0000-000000000002", "fake-hardware", "rack1", db.JSONObject{}, nil, &holder, true},
		}
		if diff := cmp.Diff(want, views); diff != "" {
			t.Errorf("PowerSyncNodes (-want +got):\n%s", diff)
		}
		if got, err := listPowerSync(ctx, dbh, "rack1", nil); err != nil || len(got) != 0 {
			t.Errorf("no drivers: %v, %v", got, err)
		}
	})
}

// listPowerSync collects every page PowerSyncNodes lists.
func listPowerSync(ctx context.Context, dbh *db.DB, group string, drivers []string) ([]db.PowerSyncNode, error) {
	var out []db.PowerSyncNode
	err := dbh.PowerSyncNodes(ctx, group, drivers, func(rows []db.PowerSyncNode) error {
		out = append(out, rows...)
		return nil
	})
	return out, err
}

// PowerSyncNodes pages through more nodes than a page holds, each in id
// order exactly once, and a row never keeps a column of the row that the
// previous page had at its place (the page's buffer is reused).
func TestPowerSyncNodesPages(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		const n = 2*db.PowerSyncPage + 1
		name, holder := "first", "cond-1"
		rows := make([]db.Node, n)
		for i := range rows {
			rows[i] = db.Node{UUID: fmt.Sprintf("00000000-0000-0000-0000-%012d", i), Driver: "ipmi"}
			if i%db.PowerSyncPage == 0 && i < db.PowerSyncPage { // the first page's first row only
				rows[i].Name, rows[i].Reservation = &name, &holder
				rows[i].DriverInfo = db.JSONObject{"ipmi_address": "10.0.0.1"}
			}
		}
		if _, err := dbh.Bun().NewInsert().Model(&rows).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		pages, seen := 0, 0
		var last int64
		err := dbh.PowerSyncNodes(ctx, "", []string{"ipmi"}, func(page []db.PowerSyncNode) error {
			pages++
			for _, r := range page {
				if r.ID <= last {
					t.Fatalf("id %d after %d", r.ID, last)
				}
				last = r.ID
				if want := fmt.Sprintf("00000000-0000-0000-0000-%012d", seen); r.UUID != want {
					t.Fatalf("row %d: uuid %s, want %s", seen, r.UUID, want)
				}
				if seen > 0 && (r.Name != nil || r.Reservation != nil || len(r.DriverInfo) != 0) {
					t.Fatalf("row %d (%s) kept another row's columns: name %v, reservation %v, driver_info %v",
						seen, r.UUID, r.Name, r.Reservation, r.DriverInfo)
				}
				seen++
			}
			return nil
		})
		if err != nil || seen != n || pages != 3 {
			t.Fatalf("listed %d nodes in %d pages (%v); want %d in 3", seen, pages, err, n)
		}
		stop := errors.New("stop")
		pages = 0
		if err := dbh.PowerSyncNodes(ctx, "", []string{"ipmi"}, func([]db.PowerSyncNode) error { pages++; return stop }); !errors.Is(err, stop) || pages != 1 {
			t.Errorf("fn's error: %v after %d pages; want it after 1", err, pages)
		}
	})
}
