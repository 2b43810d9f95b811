package db_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/uptrace/bun"
)

func newNode(t *testing.T, r *objects.Registry, name string) *objects.Node {
	t.Helper()
	obj, err := r.New("Node")
	if err != nil {
		t.Fatal(err)
	}
	n := obj.(*objects.Node)
	n.UUID = "1be26c0b-03f2-4d2e-ae87-c02d7f33c1" + name[len(name)-2:]
	n.Name = &name
	n.Driver = "redfish"
	n.DriverInfo = map[string]any{"redfish_address": "https://10.0.0.9", "port": json.Number("8443")}
	n.Properties = map[string]any{"cpus": json.Number("64"), "nested": map[string]any{"a": []any{json.Number("1"), "x"}}}
	when := time.Date(2026, 11, 22, 4, 6, 53, 164053000, time.UTC)
	n.ProvisionUpdatedAt = &when
	return n
}

func rowVersion(t *testing.T, d *db.DB, uuid string) string {
	t.Helper()
	var v string
	if err := d.Bun().NewSelect().Table(db.TableNodes).Column("version").Where("uuid = ?", uuid).Scan(context.Background(), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestStoreRoundTripAndPinnedWrites(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		reg, tb := dbtest.Registry(t), dbtest.Releases(t)
		pin, _ := tb.ParsePin("0.1")
		pinner := release.NewPinner(tb, pin)
		s := db.NewStore(dbh, reg, pinner)

		// Pinned to 0.1: a create writes Node 1.0.
		n := newNode(t, reg, "n-01")
		if err := s.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		if n.ID == 0 || n.CreatedAt.IsZero() {
			t.Fatalf("create did not fill id/created_at: %d %v", n.ID, n.CreatedAt)
		}
		if got := rowVersion(t, dbh, n.UUID); got != "1.0" {
			t.Fatalf("pinned create wrote version %s, want 1.0", got)
		}
		// Reading converts to latest: nothing differs but the in-memory
		// object is at 1.1 and everything written comes back exactly.
		got, err := s.GetNode(ctx, "n-01")
		if err != nil {
			t.Fatal(err)
		}
		want, _ := reg.Values(n)
		have, _ := reg.Values(got)
		if diff := cmp.Diff(want, have); diff != "" {
			t.Fatalf("round trip (-created +loaded):\n%s", diff)
		}
		if byUUID, err := s.GetNode(ctx, n.UUID); err != nil || byUUID.ID != n.ID {
			t.Fatalf("GetNode by uuid: %v", err)
		}

		// Unpin (as SIGHUP would): the next save writes the latest, 1.2.
		got.Extra = map[string]any{"owner": "ops"}
		pinner.Set(release.Pin{Mode: release.PinLatest}, nil)
		if err := s.Save(ctx, got); err != nil {
			t.Fatal(err)
		}
		if v := rowVersion(t, dbh, n.UUID); v != "1.2" {
			t.Fatalf("unpinned save wrote version %s, want 1.2", v)
		}
		if ch, _ := reg.Changed(got); len(ch) != 0 {
			t.Fatalf("changes left after save: %v", ch)
		}
	})
}

// Save writes only what changed, so a concurrent writer's other columns
// survive.
func TestStoreSaveWritesOnlyChangedColumns(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		reg := dbtest.Registry(t)
		s := db.NewStore(dbh, reg, release.NewPinner(dbtest.Releases(t), release.Pin{}))
		n := newNode(t, reg, "n-02")
		if err := s.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		loaded, err := s.GetNode(ctx, n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		// Another service sets maintenance meanwhile.
		if _, err := dbh.Bun().NewUpdate().Table(db.TableNodes).Set("maintenance = ?", true).Where("uuid = ?", n.UUID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		loaded.Extra = map[string]any{"rack": "r7"}
		if err := s.Save(ctx, loaded); err != nil {
			t.Fatal(err)
		}
		final, err := s.GetNode(ctx, n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if !final.Maintenance || final.Extra["rack"] != "r7" || final.UpdatedAt == nil {
			t.Fatalf("after save: maintenance=%v extra=%v updated_at=%v", final.Maintenance, final.Extra, final.UpdatedAt)
		}
		// A save never touches the lease columns.
		if _, err := dbh.AcquireLease(ctx, n.UUID, "cond-1", time.Minute); err != nil {
			t.Fatal(err)
		}
		final.Reservation = nil
		final.Extra = map[string]any{"rack": "r8"}
		if err := s.Save(ctx, final); err != nil {
			t.Fatal(err)
		}
		again, _ := s.GetNode(ctx, n.UUID)
		if again.Reservation == nil || *again.Reservation != "cond-1" {
			t.Fatalf("save cleared the lease: %v", again.Reservation)
		}
	})
}

func TestStoreErrors(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		reg := dbtest.Registry(t)
		s := db.NewStore(dbh, reg, release.NewPinner(dbtest.Releases(t), release.Pin{}))
		if _, err := s.GetNode(ctx, "missing"); !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("missing node: %v", err)
		}
		n := newNode(t, reg, "n-03")
		if err := s.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		dup := newNode(t, reg, "n-03")
		if err := s.Create(ctx, dup); !db.IsUniqueViolation(err) {
			t.Fatalf("duplicate create: %v", err)
		}
		// A row written by a newer release this code cannot read.
		if _, err := dbh.Bun().NewUpdate().Table(db.TableNodes).Set("version = ?", "1.9").Where("uuid = ?", n.UUID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		var ive *objects.IncompatibleVersionError
		if _, err := s.GetNode(ctx, n.UUID); !errors.As(err, &ive) {
			t.Fatalf("row at 1.9: %v, want IncompatibleVersionError", err)
		}
		if err := s.Delete(ctx, n); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, n); !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("second delete: %v", err)
		}
		if err := s.Save(ctx, n); !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("save of a deleted row: %v", err)
		}
	})
}

func TestStoreEveryKind(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		reg := dbtest.Registry(t)
		s := db.NewStore(dbh, reg, release.NewPinner(dbtest.Releases(t), release.Pin{}))
		ch := &objects.Chassis{UUID: "c0000000-0000-0000-0000-000000000001", Extra: map[string]any{}}
		if err := s.Create(ctx, ch); err != nil {
			t.Fatal(err)
		}
		n := newNode(t, reg, "n-04")
		n.ChassisID = &ch.ID
		if err := s.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		mode := "802.3ad"
		pg := &objects.Portgroup{UUID: "b0000000-0000-0000-0000-000000000001", NodeID: n.ID, Mode: &mode,
			Extra: map[string]any{}, InternalInfo: map[string]any{}, Properties: map[string]any{"miimon": json.Number("100")}, StandalonePortsSupported: true}
		p := &objects.Port{UUID: "a0000000-0000-0000-0000-000000000001", Address: "52:54:00:12:34:56", NodeID: n.ID, PortgroupID: &pg.ID,
			Extra: map[string]any{}, LocalLinkConnection: map[string]any{"switch_id": "sw1"}, InternalInfo: map[string]any{}, PXEEnabled: true}
		c := &objects.Conductor{Hostname: "cond-1", Online: true, Drivers: []string{"ipmi", "redfish"}}
		for _, obj := range []objects.Object{pg, p, c} {
			if err := s.Create(ctx, obj); err != nil {
				t.Fatalf("create %s: %v", obj.Kind(), err)
			}
		}
		for _, obj := range []objects.Object{ch, pg, p, c} {
			kind := obj.Kind()
			id, _ := reg.Get(obj, "id")
			got, err := s.Load(ctx, kind, func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("id = ?", id) })
			if err != nil {
				t.Fatalf("load %s: %v", kind, err)
			}
			want, _ := reg.Values(obj)
			have, _ := reg.Values(got)
			if diff := cmp.Diff(want, have); diff != "" {
				t.Errorf("%s round trip (-created +loaded):\n%s", kind, diff)
			}
		}
	})
}

// A service pinned to 0.1 writes Node 1.0: the interface choices it holds
// in memory (Node 1.1) are left NULL in the row, whose version says 1.0,
// and a save clears what an unpinned service wrote; unpinned, the next
// save writes them and 1.1.
func TestStorePinnedWritesNoInterfaces(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		reg, tb := dbtest.Registry(t), dbtest.Releases(t)
		pin, err := tb.ParsePin("0.1")
		if err != nil {
			t.Fatal(err)
		}
		pinner := release.NewPinner(tb, pin)
		s := db.NewStore(dbh, reg, pinner)
		columns := func(uuid string) (string, []*string) {
			t.Helper()
			var row db.Node
			if err := dbh.Bun().NewSelect().Model(&row).Where("uuid = ?", uuid).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			return *row.Version, []*string{row.BootInterface, row.ConsoleInterface, row.DeployInterface, row.InspectInterface,
				row.ManagementInterface, row.PowerInterface, row.RAIDInterface, row.VendorInterface}
		}
		set := func(n *objects.Node) {
			for _, iface := range []string{"boot", "console", "deploy", "inspect", "management", "power", "raid", "vendor"} {
				v := "impl-" + iface
				*n.InterfaceField(iface) = &v
			}
		}

		n := newNode(t, reg, "n-05")
		set(n)
		if err := s.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		ver, cols := columns(n.UUID)
		for i, c := range cols {
			if c != nil {
				t.Fatalf("pinned create wrote interface column %d = %q", i, *c)
			}
		}
		if ver != "1.0" {
			t.Fatalf("pinned create wrote version %s", ver)
		}

		pinner.Set(release.Pin{Mode: release.PinLatest}, nil)
		got, err := s.GetNode(ctx, n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if got.DeployInterface != nil {
			t.Fatalf("a 1.0 row read at 1.1 has deploy_interface %q, want unset", *got.DeployInterface)
		}
		set(got)
		if err := s.Save(ctx, got); err != nil {
			t.Fatal(err)
		}
		if ver, cols = columns(n.UUID); ver != "1.2" || cols[2] == nil || *cols[2] != "impl-deploy" {
			t.Fatalf("unpinned save: version %s, deploy_interface %v", ver, cols[2])
		}

		// Pinned again (a rollback): any save writes 1.0 and clears them,
		// so a 0.1 service never meets a row it cannot read.
		pinner.Set(pin, nil)
		got.Extra = map[string]any{"rack": "r1"}
		if err := s.Save(ctx, got); err != nil {
			t.Fatal(err)
		}
		ver, cols = columns(n.UUID)
		if ver != "1.0" || cols[2] != nil {
			t.Fatalf("pinned save after an unpinned one: version %s, deploy_interface %v", ver, cols[2])
		}
	})
}
