package onlinemigrations

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// Issue 23 A: at step 2.2 of the upgrade (every service runs the new
// release, still pinned to 0.1, the finalized release still 0.1) online
// data migrations once ran, moved Node rows 1.0 → 1.1 and broke the
// promised rollback: a 0.1 API then answered GET /v1/nodes with 500. They
// must refuse (exit 2) naming the pinned services, and change nothing.
func TestRunRefusedWhileServicesArePinnedBelow(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		reg, tb := dbtest.Registry(t), dbtest.Releases(t)
		r01, _ := tb.Lookup("0.1")
		for _, s := range []db.ServiceRegistration{
			{Hostname: "cond-1", Binary: db.BinaryConductor, Release: release.Current, ServiceVersion: tb.Head().ServiceVersion, Pin: "0.1"},
			{Hostname: "api-1", Binary: db.BinaryAPI, Release: release.Current, ServiceVersion: tb.Head().ServiceVersion, Pin: "0.1"},
		} {
			if _, err := dbh.RegisterService(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := dbh.AdvanceFinalizedRelease(ctx, r01.Release(), r01.ServiceVersion); err != nil {
			t.Fatal(err)
		}
		pin, _ := tb.ParsePin("0.1")
		s := db.NewStore(dbh, reg, release.NewPinner(tb, pin))
		for i := range 2 {
			obj, _ := reg.New("Node")
			n := obj.(*objects.Node)
			n.UUID, n.Driver = fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i), "fake-hardware"
			if err := s.Create(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
		mreg := &Registry{}
		m, err := UpdateToLatestVersions(reg, tb.Head(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := mreg.Register(m); err != nil {
			t.Fatal(err)
		}

		_, err = (&Runner{DB: dbh, Registry: mreg}).Run(ctx, 0, nil)
		if !errors.Is(err, ErrRefused) {
			t.Fatalf("Run at step 2.2 = %v, want a refusal", err)
		}
		for _, want := range []string{"rivet-api on api-1", "rivet-conductor on cond-1", "pinned to 0.1"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("refusal %q does not name %q", err, want)
			}
		}
		old, err := dbh.Bun().NewSelect().Table(db.TableNodes).Where("version = ?", "1.0").Count(ctx)
		if err != nil || old != 2 {
			t.Fatalf("after the refusal %d node rows are at 1.0 (%v), want 2", old, err)
		}
		if fr, err := dbh.FinalizedRelease(ctx); err != nil || fr.ServiceVersion != r01.ServiceVersion {
			t.Fatalf("after the refusal the finalized release is %+v (%v), want 0.1", fr, err)
		}
	})
}
