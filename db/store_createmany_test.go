package db_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// CreateMany writes a batch with one commit; when one object of it fails,
// each is created on its own, so every caller gets exactly the result a
// lone Create would have given it, in batch order.
func TestStoreCreateMany(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		reg, tb := dbtest.Registry(t), dbtest.Releases(t)
		for _, pin := range []string{"", "0.1"} {
			p := release.Pin{Mode: release.PinLatest}
			if pin != "" {
				p, _ = tb.ParsePin(pin)
			}
			s := db.NewStore(dbh, reg, release.NewPinner(tb, p))
			tag := pin + "x"

			// All new: one commit, each object gets its id, created_at and
			// a fresh snapshot, and reads back as written.
			batch := []*objects.Node{newNode(t, reg, "a"+tag+"-11"), newNode(t, reg, "b"+tag+"-12"), newNode(t, reg, "c"+tag+"-13")}
			for i, n := range batch {
				n.UUID = uuidFor(tag, i)
			}
			errs := s.CreateMany(ctx, asObjects(batch))
			ids := map[int64]bool{}
			for i, n := range batch {
				if errs[i] != nil {
					t.Fatalf("pin %q: node %d: %v", pin, i, errs[i])
				}
				if n.ID == 0 || n.CreatedAt.IsZero() || ids[n.ID] {
					t.Fatalf("pin %q: node %d: id %d, created_at %v", pin, i, n.ID, n.CreatedAt)
				}
				ids[n.ID] = true
				if changed, _ := reg.Changed(n); len(changed) != 0 {
					t.Fatalf("pin %q: node %d changed after the write: %v", pin, i, changed)
				}
				got, err := s.GetNode(ctx, n.UUID)
				if err != nil {
					t.Fatal(err)
				}
				if got.ID != n.ID || *got.Name != *n.Name || !cmp.Equal(got.Properties, n.Properties) || !got.CreatedAt.Equal(n.CreatedAt) {
					t.Fatalf("pin %q: node %d read back as %+v, wrote %+v", pin, i, got, n)
				}
				if v := rowVersion(t, dbh, n.UUID); pin == "0.1" && v != "1.0" || pin == "" && v != "1.2" {
					t.Fatalf("pin %q: row version %s", pin, v)
				}
			}

			// A batch with a name already taken, a UUID already taken, a
			// name used twice within the batch and two good nodes: the
			// duplicates fail, the others are stored; the first of the
			// two same-named ones wins.
			dupName := newNode(t, reg, "a"+tag+"-11")
			dupName.UUID = uuidFor(tag, 10)
			dupUUID := newNode(t, reg, "z"+tag+"-21")
			dupUUID.UUID = batch[1].UUID
			good1 := newNode(t, reg, "g"+tag+"-22")
			good1.UUID = uuidFor(tag, 11)
			twiceA := newNode(t, reg, "t"+tag+"-23")
			twiceA.UUID = uuidFor(tag, 12)
			twiceB := newNode(t, reg, "t"+tag+"-23")
			twiceB.UUID = uuidFor(tag, 13)
			good2 := newNode(t, reg, "h"+tag+"-24")
			good2.UUID = uuidFor(tag, 14)
			mixed := []*objects.Node{dupName, good1, twiceA, dupUUID, twiceB, good2}
			errs = s.CreateMany(ctx, asObjects(mixed))
			wantFail := []bool{true, false, false, true, true, false}
			for i, n := range mixed {
				if failed := errs[i] != nil; failed != wantFail[i] {
					t.Fatalf("pin %q: node %d (%s): error %v, want failure %t", pin, i, *n.Name, errs[i], wantFail[i])
				}
				if wantFail[i] {
					if !db.IsUniqueViolation(errs[i]) {
						t.Fatalf("pin %q: node %d: %v is not a unique violation", pin, i, errs[i])
					}
					// As a lone Create says it.
					lone := newNode(t, reg, *n.Name)
					lone.UUID = n.UUID
					if err := s.Create(ctx, lone); err == nil || !db.IsUniqueViolation(err) {
						t.Fatalf("pin %q: lone create of node %d: %v", pin, i, err)
					}
					continue
				}
				got, err := s.GetNode(ctx, n.UUID)
				if err != nil || got.ID != n.ID || n.ID == 0 {
					t.Fatalf("pin %q: node %d not stored: %v %+v", pin, i, err, got)
				}
			}
		}
	})
}

func asObjects(ns []*objects.Node) []objects.Object {
	out := make([]objects.Object, len(ns))
	for i, n := range ns {
		out[i] = n
	}
	return out
}

func uuidFor(tag string, i int) string {
	b := []byte("00000000-0000-4000-8000-000000000000")
	copy(b[len(b)-4:], []byte{"0123456789abcdef"[len(tag)%16], 'a', "0123456789abcdef"[i/16], "0123456789abcdef"[i%16]})
	return string(b)
}
