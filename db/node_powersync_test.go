package db_test

import (
	"context"
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
		got, err := dbh.PowerSyncNodes(ctx, "RACK1", []string{"ipmi", "fake-hardware"})
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
		if got, err := dbh.PowerSyncNodes(ctx, "rack1", nil); err != nil || len(got) != 0 {
			t.Errorf("no drivers: %v, %v", got, err)
		}
	})
}
