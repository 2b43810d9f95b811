package onlinemigrations

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// Rows written by a pinned 0.1 service (Node 1.0) are rewritten at 1.1 by
// update_to_latest_versions, with ironic-dbsync's budget and exit semantics:
// --max-count 2 on 3 rows leaves the run unfinished, the next finishes.
func TestUpdateToLatestVersions(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		reg, tb := dbtest.Registry(t), dbtest.Releases(t)
		pin, _ := tb.ParsePin("0.1")
		s := db.NewStore(dbh, reg, release.NewPinner(tb, pin))
		for i := range 3 {
			obj, _ := reg.New("Node")
			n := obj.(*objects.Node)
			n.UUID = fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i)
			n.Driver = "fake-hardware"
			if err := s.Create(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
		m, err := UpdateToLatestVersions(reg, tb.Head(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if m.MinServiceVersion != tb.Head().ServiceVersion {
			t.Fatalf("MinServiceVersion = %d, want HEAD's %d", m.MinServiceVersion, tb.Head().ServiceVersion)
		}
		r := &Registry{}
		if err := r.Register(m); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		run := &Runner{DB: dbh, Registry: r, Report: LineReporter{W: &out}}
		finished, err := run.Run(ctx, 2, nil)
		if err != nil || finished {
			t.Fatalf("first run: finished=%v err=%v", finished, err)
		}
		finished, err = run.Run(ctx, 2, nil)
		if err != nil || !finished {
			t.Fatalf("second run: finished=%v err=%v", finished, err)
		}
		want := "update_to_latest_versions() migrated 2 of 3 objects.\nupdate_to_latest_versions() migrated 1 of 1 objects.\n"
		if out.String() != want {
			t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
		}
		var versions []string
		if err := dbh.Bun().NewSelect().Table(db.TableNodes).Column("version").Scan(ctx, &versions); err != nil {
			t.Fatal(err)
		}
		for _, v := range versions {
			if v != tb.Head().Objects["Node"][0].String() {
				t.Fatalf("row left at %s after migrations completed: %v", v, versions)
			}
		}

		// A live service older than HEAD's service version blocks it.
		if _, err := dbh.RegisterService(ctx, db.ServiceRegistration{Hostname: "old", Binary: db.BinaryConductor, Release: "0.1.0", ServiceVersion: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := run.Run(ctx, 0, nil); err == nil {
			t.Fatal("migration ran while a 0.1 conductor is live")
		}
	})
}
