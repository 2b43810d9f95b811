package db_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// TestGetNodeTypedMatchesBun holds GetNode's typed statement and scanner
// equal to bun's query and reflective scan on every dialect: rows with
// every column NULL or set in turn (variedNodeRow), a NULL provision_state,
// rows at every Node version, looked up by UUID and by name, and the same
// errors for a missing node, a row without a version and one at a version
// this release does not know.
// typedScanFixture is what the typed-scan tests share: a store on a fresh
// database of dialect d (and the database), six varied rows (variedNodeRow) at each Node
// version, the fifth with a NULL provision_state, and insert, which writes
// a row with a UUID made of its id, under one chassis when it has one.
func typedScanFixture(t *testing.T, d db.Dialect) (*db.Store, *db.DB, []*db.Node, func(*db.Node)) {
	t.Helper()
	reg, tb := dbtest.Registry(t), dbtest.Releases(t)
	dbh := dbtest.Open(t, d)
	s := db.NewStore(dbh, reg, release.NewPinner(tb, release.Pin{}))
	versions, err := reg.Versions("Node")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var rows []*db.Node
	for i, v := range versions {
		for seed := range 6 {
			row := variedNodeRow(seed+10*i, v.String())
			if seed == 4 {
				row.ProvisionState = nil
			}
			rows = append(rows, row)
		}
	}
	chassisVersion := "1.0"
	chassis := &db.Chassis{UUID: "7e57c4a5-0000-4000-8000-000000000001", Version: &chassisVersion}
	if _, err := dbh.Bun().NewInsert().Model(chassis).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	insert := func(row *db.Node) {
		t.Helper()
		row.UUID = fmt.Sprintf("1be26c0b-03f2-4d2e-ae87-%012x", row.ID)
		if row.ChassisID != nil {
			row.ChassisID = &chassis.ID
		}
		if _, err := dbh.Bun().NewInsert().Model(row).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return s, dbh, rows, insert
}

func TestGetNodeTypedMatchesBun(t *testing.T) {
	for _, d := range db.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			s, _, rows, insert := typedScanFixture(t, d)
			reg, ctx := s.Registry(), context.Background()
			noVersion := variedNodeRow(97, "1.0")
			noVersion.Version = nil
			future := variedNodeRow(98, "1.99")
			rows = append(rows, noVersion, future)
			for _, row := range rows {
				insert(row)
			}
			compare := func(t *testing.T, col, ident string) {
				t.Helper()
				typed, terr := s.GetNode(ctx, ident)
				slow, serr := s.GetNodeBun(ctx, col, ident)
				if fmt.Sprint(terr) != fmt.Sprint(serr) {
					t.Fatalf("%s %q: errors differ: typed %v, bun %v", col, ident, terr, serr)
				}
				if terr != nil {
					return
				}
				if diff := cmp.Diff(slow, typed, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
					t.Fatalf("%s %q: typed read differs (-bun +typed):\n%s", col, ident, diff)
				}
				if !reflect.DeepEqual(slow, typed) {
					t.Fatalf("%s %q: typed read differs (time zones?):\nbun   %+v\ntyped %+v", col, ident, slow, typed)
				}
				sc, _ := reg.Changed(slow)
				tc, _ := reg.Changed(typed)
				if !reflect.DeepEqual(sc, tc) {
					t.Fatalf("%s %q: changes differ: bun %v, typed %v", col, ident, sc, tc)
				}
			}
			read := 0
			for _, row := range rows {
				compare(t, "uuid", row.UUID)
				if row.Name != nil {
					compare(t, "name", *row.Name)
					read++
				}
			}
			if read == 0 {
				t.Fatal("no row had a name: the by-name path went untested")
			}
			compare(t, "uuid", "00000000-0000-0000-0000-000000000000")
			compare(t, "name", "no-such-node")
			if _, err := s.GetNode(ctx, "no-such-node"); err == nil {
				t.Fatal("a missing node was found")
			}
		})
	}
}
