package db_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

func strp(s string) *string { return &s }

// A conductor registers twice (a restart): one row, updated; its hardware
// interface and plugin rows are replaced; the group is lowercased; a
// heartbeat keeps it live and going offline takes it out of the ring.
func TestRegisterConductor(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		reg := db.ConductorRegistration{Hostname: "cond-1:8090", Group: "Rack-A", Drivers: []string{"fake-hardware"}, Version: "1.0",
			Interfaces: []db.ConductorHardwareInterface{{HardwareType: "fake-hardware", InterfaceType: "power", InterfaceName: "fake", IsDefault: true}},
			Plugins: []db.ConductorPlugin{
				{HardwareType: "fake-hardware", Driver: strp("fake"), Status: strp("ok"), PluginVersion: strp("1.0.0"),
					Protocol: ptr(1), Interfaces: db.JSONObject{"power": json.Number("1")}, Capabilities: db.JSONStrings{"nmi"}, BuiltIn: ptr(true)},
				{Driver: strp("acme"), Status: strp("refused"), Error: strp("no common protocol version")},
			}}
		first, err := dbh.RegisterConductor(ctx, reg)
		if err != nil {
			t.Fatal(err)
		}
		reg.Drivers = []string{"fake-hardware", "ipmi"}
		reg.Plugins = reg.Plugins[:1]
		second, err := dbh.RegisterConductor(ctx, reg)
		if err != nil {
			t.Fatal(err)
		}
		if second.ID != first.ID || second.ConductorGroup != "rack-a" || !second.Online || len(second.Drivers) != 2 {
			t.Fatalf("re-registration: %+v (first id %d)", second, first.ID)
		}
		plugs, err := dbh.ConductorPlugins(ctx, "cond-1:8090")
		if err != nil || len(plugs) != 1 {
			t.Fatalf("plugin rows after re-registration: %d, %v", len(plugs), err)
		}
		if diff := cmp.Diff(reg.Plugins[0].Interfaces, plugs[0].Interfaces); diff != "" || *plugs[0].PluginVersion != "1.0.0" || plugs[0].Capabilities[0] != "nmi" {
			t.Fatalf("plugin row round trip: %+v %s", plugs[0], diff)
		}
		var hw []db.ConductorHardwareInterface
		if err := dbh.Bun().NewSelect().Model(&hw).Where("conductor_id = ?", first.ID).Scan(ctx); err != nil || len(hw) != 1 {
			t.Fatalf("hardware interface rows: %d, %v", len(hw), err)
		}
		live := func() int {
			cs, err := dbh.LiveConductors(ctx, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			return len(cs)
		}
		if live() != 1 {
			t.Fatal("registered conductor is not live")
		}
		if err := dbh.TouchConductor(ctx, "cond-1:8090", false); err != nil || live() != 0 {
			t.Fatalf("offline conductor still live (%v)", err)
		}
		if err := dbh.TouchConductor(ctx, "nobody", true); !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("heartbeat of an unregistered conductor = %v", err)
		}
	})
}

// TakeOverLease moves a lease only from a holder that is dead (heartbeat
// older than the timeout) or whose lease expired, never from itself; the
// new epoch fences the old holder out.
func TestTakeOverLease(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		for _, host := range []string{"dead", "live", "draining"} {
			if _, err := dbh.RegisterConductor(ctx, db.ConductorRegistration{Hostname: host, Version: "1.0"}); err != nil {
				t.Fatal(err)
			}
		}
		now, _ := dbh.Now(ctx)
		if _, err := dbh.Bun().NewUpdate().Table(db.TableConductors).Set("updated_at = ?", now.Add(-time.Hour)).
			Where("? = ?", bun.Ident("hostname"), "dead").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := dbh.TouchConductor(ctx, "draining", false); err != nil {
			t.Fatal(err)
		}
		tests := map[string]struct {
			holder  string
			ttl     time.Duration
			wantErr bool
		}{
			"dead holder":                      {holder: "dead", ttl: time.Hour},
			"never registered holder":          {holder: "ghost", ttl: time.Hour},
			"live holder":                      {holder: "live", ttl: time.Hour, wantErr: true},
			"draining holder still heartbeats": {holder: "draining", ttl: time.Hour, wantErr: true},
			"live holder's expired lease":      {holder: "live", ttl: time.Millisecond},
			"own lease":                        {holder: "me", ttl: time.Hour, wantErr: true},
		}
		i := 0
		for name, tc := range tests {
			i++
			t.Run(name, func(t *testing.T) {
				n := insertNode(t, dbh, fmt.Sprintf("20000000-0000-0000-0000-%012d", i))
				old, err := dbh.AcquireLease(ctx, n.UUID, tc.holder, tc.ttl)
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(5 * time.Millisecond)
				epoch, err := dbh.TakeOverLease(ctx, n.UUID, tc.holder, "me", time.Minute, time.Minute)
				if tc.wantErr {
					if !errors.Is(err, db.ErrNodeLocked) {
						t.Fatalf("TakeOverLease = %v, want NodeLocked", err)
					}
					return
				}
				if err != nil || epoch <= old {
					t.Fatalf("TakeOverLease = %d, %v (old epoch %d)", epoch, err, old)
				}
				if err := dbh.ReleaseLease(ctx, n.UUID, tc.holder, old); !errors.Is(err, db.ErrLeaseLost) {
					t.Fatalf("old holder released a taken-over lease: %v", err)
				}
				if got := readNode(t, dbh, n.UUID); got.Reservation == nil || *got.Reservation != "me" {
					t.Fatalf("holder after takeover: %v", got.Reservation)
				}
			})
		}
	})
}

// DestroyNodeFenced deletes a node with its ports only for the lease
// holder at its epoch.
func TestDestroyNodeFenced(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		n := insertNode(t, dbh, "30000000-0000-0000-0000-000000000001")
		port := &db.Port{UUID: "31000000-0000-0000-0000-000000000001", Address: "52:54:00:00:00:01", NodeID: n.ID}
		if _, err := dbh.Bun().NewInsert().Model(port).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		epoch, err := dbh.AcquireLease(ctx, n.UUID, "me", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := dbh.DestroyNodeFenced(ctx, n.ID, "me", epoch+1); !errors.Is(err, db.ErrLeaseLost) {
			t.Fatalf("destroy at a wrong epoch = %v, want ErrLeaseLost", err)
		}
		if err := dbh.DestroyNodeFenced(ctx, n.ID, "me", epoch); err != nil {
			t.Fatal(err)
		}
		var left int64
		left, err = dbh.Bun().NewSelect().Table(db.TablePorts).Where("node_id = ?", n.ID).Count(ctx)
		if err != nil || left != 0 {
			t.Fatalf("ports left after destroy: %d, %v", left, err)
		}
	})
}
