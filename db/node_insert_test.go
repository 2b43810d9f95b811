package db_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/uptrace/bun"
)

// TestCreateNodesTypedMatchesBun holds the typed PostgreSQL insert of
// nodes (CreateMany's path there) equal to bun's INSERT: rows with every
// column NULL or set in turn (variedNodeRow) written both ways read back
// the same, apart from their ids and UUIDs; the lease columns keep their
// defaults; a batch with a duplicate keeps nothing and says which error.
func TestCreateNodesTypedMatchesBun(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		if d != db.Postgres {
			t.Skip("the typed insert is PostgreSQL's")
		}
		ctx := context.Background()
		reg, tb := dbtest.Registry(t), dbtest.Releases(t)
		dbh := dbtest.Open(t, d)
		s := db.NewStore(dbh, reg, release.NewPinner(tb, release.Pin{}))
		chassisVersion := "1.0"
		chassis := &db.Chassis{UUID: "7e57c4a5-0000-4000-8000-000000000002", Version: &chassisVersion}
		if _, err := dbh.Bun().NewInsert().Model(chassis).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		variant := func(seed int, tag byte) *db.Node {
			row := variedNodeRow(seed, "1.1")
			row.ID = 0
			row.UUID = fmt.Sprintf("1be26c0b-03f2-4d2e-ae87-%c%011x", tag, seed)
			if row.Name != nil {
				name := fmt.Sprintf("%s-%c", *row.Name, tag)
				row.Name = &name
			}
			if row.InstanceUUID != nil {
				iu := fmt.Sprintf("%s-%c", *row.InstanceUUID, tag)
				row.InstanceUUID = &iu
			}
			if row.ChassisID != nil {
				row.ChassisID = &chassis.ID
			}
			// Set by the lease functions only: an insert leaves them.
			row.Reservation, row.ReservationEpoch, row.ReservationExpiresAt = nil, 0, bun.NullTime{}
			return row
		}
		var typed, viaBun []*db.Node
		for seed := range 6 {
			typed = append(typed, variant(seed, 'a'))
			viaBun = append(viaBun, variant(seed, 'b'))
		}
		// A row without created_at is stamped, as bun's hook stamps it.
		typed[3].CreatedAt, viaBun[3].CreatedAt = time.Time{}, time.Time{}
		if kept, err := s.InsertNodesPG(ctx, typed); err != nil || kept {
			t.Fatalf("typed insert: kept %t, %v", kept, err)
		}
		for _, row := range viaBun {
			if _, err := dbh.Bun().NewInsert().Model(row).ExcludeColumn("reservation", "reservation_expires_at", "reservation_epoch").Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		ids := map[int64]bool{}
		for i := range typed {
			if typed[i].ID == 0 || ids[typed[i].ID] {
				t.Fatalf("row %d: id %d after the typed insert", i, typed[i].ID)
			}
			ids[typed[i].ID] = true
			a, b := readRow(t, dbh, typed[i].UUID), readRow(t, dbh, viaBun[i].UUID)
			if a.ID != typed[i].ID {
				t.Fatalf("row %d: stored with id %d, reported %d", i, a.ID, typed[i].ID)
			}
			if a.Reservation != nil || a.ReservationEpoch != 0 || !a.ReservationExpiresAt.IsZero() {
				t.Fatalf("row %d: lease columns written: %v %v %v", i, a.Reservation, a.ReservationEpoch, a.ReservationExpiresAt)
			}
			if i == 3 {
				if time.Since(a.CreatedAt).Abs() > time.Minute || !a.CreatedAt.Equal(typed[i].CreatedAt) {
					t.Fatalf("row 3: created_at %v stored, %v reported: not stamped at the insert", a.CreatedAt, typed[i].CreatedAt)
				}
				a.CreatedAt = b.CreatedAt
			}
			a.ID, b.ID, a.UUID, b.UUID = 0, 0, "", ""
			a.Name, b.Name, a.InstanceUUID, b.InstanceUUID = nil, nil, nil, nil
			if diff := cmp.Diff(b, a, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
				t.Fatalf("row %d: typed insert differs (-bun +typed):\n%s", i, diff)
			}
		}

		// A batch whose third row takes a UUID already stored keeps
		// nothing, says PostgreSQL's unique violation, and clears the ids.
		batch := []*db.Node{variant(20, 'c'), variant(21, 'c'), variant(0, 'a'), variant(22, 'c')}
		kept, err := s.InsertNodesPG(ctx, batch)
		if err == nil || kept || !db.IsUniqueViolation(err) {
			t.Fatalf("duplicate in a batch: kept %t, %v", kept, err)
		}
		for i, row := range batch {
			if row.ID != 0 {
				t.Fatalf("row %d of a refused batch has id %d", i, row.ID)
			}
			if i != 2 {
				if n, err := dbh.Bun().NewSelect().Table(db.TableNodes).Where("uuid = ?", row.UUID).Count(ctx); err != nil || n != 0 {
					t.Fatalf("row %d of a refused batch was kept (%d, %v)", i, n, err)
				}
			}
		}
	})
}

func readRow(t *testing.T, dbh *db.DB, uuid string) *db.Node {
	t.Helper()
	row := new(db.Node)
	if err := dbh.Bun().NewSelect().Model(row).Where("uuid = ?", uuid).Scan(context.Background()); err != nil {
		t.Fatalf("read %s: %v", uuid, err)
	}
	return row
}
