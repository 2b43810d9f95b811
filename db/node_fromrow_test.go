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

// variedNodeRow fills every column of a nodes row by reflection from seed:
// each nullable column NULL or set, each JSON column NULL, {} or a
// document, so a column nodeFromRow forgot or mishandles shows up.
func variedNodeRow(seed int, version string) *db.Node {
	row := &db.Node{}
	rv := reflect.ValueOf(row).Elem()
	str := func(i int) string { return fmt.Sprintf("v%d-%d", seed, i) }
	var fill func(v reflect.Value, i int)
	fill = func(v reflect.Value, i int) {
		k := (seed + i) % 3
		switch f := v.Addr().Interface().(type) {
		case *string:
			*f = str(i)
		case **string:
			if k != 0 {
				s := str(i)
				*f = &s
			}
		case *int64:
			*f = int64(seed*100 + i)
		case **int64:
			if k != 0 {
				n := int64(seed + i)
				*f = &n
			}
		case *bool:
			*f = k == 1
		case **bool:
			if k != 0 {
				b := k == 1
				*f = &b
			}
		case *db.JSONObject:
			switch k {
			case 1:
				*f = db.JSONObject{}
			case 2:
				*f = db.JSONObject{"k": str(i), "ipmi_password": "pw", "n": map[string]any{"x": []any{"y"}}, "num": 7, "big": 12345678901234567, "f": 1.5}
			}
		case *bun.NullTime:
			if k != 0 {
				*f = bun.NullTime{Time: time.Date(2026, 1, 2, 3, 4, 5, seed*1000+i, time.FixedZone("x", 3600))}
			}
		case *time.Time:
			*f = time.Date(2026, 3, 4, 5, 6, 7, seed, time.FixedZone("y", -7200))
		case *bun.BaseModel:
		case *db.Timestamps:
			fill(v.Field(0), i+100)
			fill(v.Field(1), i+101)
		default:
			panic(fmt.Sprintf("variedNodeRow: no filler for %T", f))
		}
	}
	for i := range rv.NumField() {
		if rv.Type().Field(i).Name == "Version" {
			continue
		}
		fill(rv.Field(i), i)
	}
	row.Version = &version
	return row
}

// TestNodeFromRowMatchesGeneric holds the typed row → Node conversion
// equal to the generic, registry-driven one, field for field and change
// set included: NULLs, empty and set JSON documents, timestamps in other
// zones, a NULL provision_state, rows at every Node version (1.0 rows are
// upgraded by FromDB), sealed credentials opened with the keyring, and
// the same errors for a missing key or version.
func TestNodeFromRowMatchesGeneric(t *testing.T) {
	reg, tb := dbtest.Registry(t), dbtest.Releases(t)
	dbh := dbtest.Open(t, db.SQLite)
	plain := db.NewStore(dbh, reg, release.NewPinner(tb, release.Pin{}))
	keyed := plain.WithKeyring(testKeys(t, "k1"))
	if !plain.TypedNodeRows() {
		t.Fatal("the installed Node fields are not the ones nodeFromRow fills; teach it the new field")
	}
	versions, err := reg.Versions("Node")
	if err != nil {
		t.Fatal(err)
	}
	compare := func(t *testing.T, s *db.Store, row *db.Node) {
		t.Helper()
		typed, generic, terr, gerr := s.FromRowPaths(row)
		if fmt.Sprint(terr) != fmt.Sprint(gerr) {
			t.Fatalf("errors differ: typed %v, generic %v", terr, gerr)
		}
		if terr != nil {
			return
		}
		if diff := cmp.Diff(generic, typed, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
			t.Fatalf("typed conversion differs (-generic +typed):\n%s", diff)
		}
		// cmp compares times by Equal; the zone (UTC) must match too.
		if !reflect.DeepEqual(generic, typed) {
			t.Fatalf("typed conversion differs (time zones?):\ngeneric %+v\ntyped   %+v", generic, typed)
		}
		gc, _ := reg.Changed(generic)
		tc, _ := reg.Changed(typed)
		if !reflect.DeepEqual(gc, tc) {
			t.Fatalf("changes differ: generic %v, typed %v", gc, tc)
		}
	}
	for _, v := range versions {
		for seed := range 9 {
			t.Run(fmt.Sprintf("%s/%d", v, seed), func(t *testing.T) {
				compare(t, plain, variedNodeRow(seed, v.String()))
				row := variedNodeRow(seed, v.String())
				row.ProvisionState = nil
				compare(t, plain, row)
			})
		}
	}
	t.Run("errors", func(t *testing.T) {
		row := variedNodeRow(2, "1.0")
		row.Version = nil
		compare(t, plain, row)
		for _, bad := range []string{"x", "0.9", "1.99", "2.0"} {
			row = variedNodeRow(2, bad)
			compare(t, plain, row)
		}
	})

	// Real rows: written at 1.0 and latest, credentials sealed, read back.
	ctx := context.Background()
	pin01, _ := tb.ParsePin("0.1")
	old := db.NewStore(dbh, reg, release.NewPinner(tb, pin01)).WithKeyring(testKeys(t, "k1"))
	for i, s := range []*db.Store{old, keyed} {
		n := newNode(t, reg, fmt.Sprintf("real-%02d", i))
		n.DriverInfo = map[string]any{"ipmi_password": credPassword, "ipmi_address": "10.1.1.1", "nested": map[string]any{"x": "p"}}
		boot := "ipxe"
		n.BootInterface = &boot
		if err := s.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	var rows []*db.Node
	if err := dbh.Bun().NewSelect().Model(&rows).Order("id").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, row := range rows {
		compare(t, keyed, row) // opened
		compare(t, plain, row) // no keyring: the same error
		compare(t, plain.WithKeyring(testKeys(t, "other")), row)
	}
	got, err := keyed.GetNode(ctx, rows[0].UUID)
	if err != nil {
		t.Fatal(err)
	}
	if got.DriverInfo["ipmi_password"] != credPassword || got.BootInterface != nil {
		t.Fatalf("1.0 row read back wrong: %v, boot %v", got.DriverInfo, got.BootInterface)
	}
}
