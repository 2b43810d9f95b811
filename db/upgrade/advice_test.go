package upgrade

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/db/onlinemigrations"
)

// upgrade check never advises a step that ends the rollback window without
// saying so (issue 23 A): at step 2.2 (everything upgraded, pinned to 0.1,
// finalized at 0.1) it says the pending migrations wait for step 3 and
// names the pinned services, and that unpinning ends the rollback window;
// once unpinned (the watermark not yet moved) it advises the migrations
// and says they finalize the release; once finalized, it advises them
// plainly. An old service that stops heartbeating shows as unknown, keeps
// blocking the migrations and the auto pin, and is named with `rivet
// upgrade forget`.
func TestCheckAdviceAndTheRollbackWindow(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		reg, tb := dbtest.Registry(t), oneStep(t)
		mreg := &onlinemigrations.Registry{}
		m, err := onlinemigrations.UpdateToLatestVersions(reg, tb.Head(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := mreg.Register(m); err != nil {
			t.Fatal(err)
		}
		dbh := dbtest.Open(t, d)
		lv := db.Liveness{Timeout: time.Minute}
		check := func() []Result {
			t.Helper()
			rs, err := Check(ctx, dbh, tb, mreg, lv)
			if err != nil {
				t.Fatal(err)
			}
			return rs
		}
		register := func(host, binary, rel string, sv int, pin string) {
			t.Helper()
			if _, err := dbh.RegisterService(ctx, db.ServiceRegistration{Hostname: host, Binary: binary, Release: rel, ServiceVersion: sv, Pin: pin}); err != nil {
				t.Fatal(err)
			}
		}
		head := tb.Head().ServiceVersion
		r01, _ := tb.Lookup("0.1")
		pin01, _ := tb.ParsePin("0.1")
		s := db.NewStore(dbh, reg, release.NewPinner(tb, pin01))
		for i := range 2 {
			obj, _ := reg.New("Node")
			n := obj.(*objects.Node)
			n.UUID, n.Driver = fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i), "fake-hardware"
			if err := s.Create(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := dbh.AdvanceFinalizedRelease(ctx, r01.Release(), r01.ServiceVersion); err != nil {
			t.Fatal(err)
		}

		// Step 2.2.
		register("cond-1", db.BinaryConductor, release.Current, head, "0.1")
		register("api-1", db.BinaryAPI, release.Current, head, "0.1")
		rs := check()
		mig := details(rs, "Online data migrations")
		if strings.Contains(mig, "Run `rivet dbsync online-data-migrations`") ||
			!strings.Contains(mig, "update_to_latest_versions: 2 object(s), blocked until every service runs release "+release.Current+" unpinned") ||
			!strings.Contains(mig, fmt.Sprintf("rivet-api on api-1 (release %s, service version %d, pinned to 0.1, live)", release.Current, head)) ||
			!strings.Contains(mig, "Rolling back stays possible") {
			t.Errorf("step 2.2, migrations: %s", mig)
		}
		if pins := details(rs, "Release pins"); !strings.Contains(pins, "rolling back is no longer possible") ||
			!strings.Contains(pins, "this finalizes release "+release.Current) {
			t.Errorf("step 2.2, pins: %s", pins)
		}

		// Step 3.4, before any service followed: the migrations finalize.
		register("cond-1", db.BinaryConductor, release.Current, head, "")
		register("api-1", db.BinaryAPI, release.Current, head, "auto")
		mig = details(check(), "Online data migrations")
		if !strings.Contains(mig, "Run `rivet dbsync online-data-migrations`") ||
			!strings.Contains(mig, "It first finalizes release "+release.Current) || !strings.Contains(mig, "no longer possible") {
			t.Errorf("unpinned, not yet finalized: %s", mig)
		}
		// An old service that went quiet still counts.
		register("api-old", db.BinaryAPI, "0.1.1", r01.ServiceVersion, "")
		ageService(t, dbh, "api-old", db.BinaryAPI, 10*time.Minute)
		rs = check()
		if svc := details(rs, "Service versions"); codes(rs)["Service versions"] != Warning ||
			!strings.Contains(svc, "Not heartbeating (unknown, not gone): rivet-api on api-old (release 0.1.1") ||
			!strings.Contains(svc, "rivet upgrade forget BINARY HOST") {
			t.Errorf("unknown old service, services: %s", svc)
		}
		if mig := details(rs, "Online data migrations"); !strings.Contains(mig, "rivet-api on api-old (release 0.1.1, service version 1, unpinned, unknown") {
			t.Errorf("unknown old service, migrations: %s", mig)
		}
		st, err := Collect(ctx, dbh, tb, mreg, lv)
		if err != nil {
			t.Fatal(err)
		}
		if st.AutoPin != r01.Label() {
			t.Errorf("auto pin with an unknown 0.1 service = %s", st.AutoPin)
		}
		// Past service_forget_timeout it is gone and no longer counts.
		rs, err = Check(ctx, dbh, tb, mreg, db.Liveness{Timeout: time.Minute, Forget: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if codes(rs)["Service versions"] != Success ||
			strings.Contains(details(rs, "Online data migrations"), "blocked") {
			t.Errorf("gone old service still counts: %+v", rs)
		}
		if _, err := dbh.ForgetService(ctx, "api-old", db.BinaryAPI); err != nil {
			t.Fatal(err)
		}
		if _, _, err := dbh.AdvanceFinalizedRelease(ctx, release.Current, head); err != nil {
			t.Fatal(err)
		}
		mig = details(check(), "Online data migrations")
		if !strings.Contains(mig, "Run `rivet dbsync online-data-migrations`") || strings.Contains(mig, "finalizes") {
			t.Errorf("finalized: %s", mig)
		}

		// Below the finalized release a quiet old service no longer counts
		// (it stops at its next heartbeat), but is reported.
		register("api-late", db.BinaryAPI, "0.1.1", r01.ServiceVersion, "")
		ageService(t, dbh, "api-late", db.BinaryAPI, 10*time.Minute)
		rs = check()
		if fin := details(rs, "Finalized release"); codes(rs)["Finalized release"] != Failure || !strings.Contains(fin, "api-late (release 0.1.1, service version 1, unknown)") {
			t.Errorf("unknown old service below the watermark: %s", fin)
		}
		if codes(rs)["Service versions"] != Success || !strings.Contains(details(rs, "Online data migrations"), "blocked") {
			t.Errorf("an old service below the watermark: it no longer holds the pin back but blocks the migrations until it stops: %+v", rs)
		}
		if st, err := Collect(ctx, dbh, tb, mreg, lv); err != nil || st.AutoPin != tb.Head().Label() {
			t.Errorf("auto pin with a 0.1 service below the watermark = %s (%v)", st.AutoPin, err)
		}
	})
}

// Migrations blocked by the same services are named together, the services
// once; one blocked and one runnable get both pieces of advice.
func TestCheckMigrationsGroupsBlockers(t *testing.T) {
	by := []string{"rivet-api on api-1 (release 0.2.0, service version 2, pinned to 0.1, live)"}
	st := &Status{Finalized: &Finalized{Release: "0.1", ServiceVersion: 1}, Migrations: []Migration{
		{Name: "a", MinServiceVersion: 2, Pending: 3, Release: "0.2.0", BlockedBy: by},
		{Name: "b", MinServiceVersion: 2, Pending: 4, Release: "0.2.0", BlockedBy: by},
		{Name: "c", Pending: 0, Release: "0.2.0", BlockedBy: by},
	}}
	r := checkMigrations(st)
	want := "Pending, not runnable yet: a: 3 object(s), b: 4 object(s), blocked until every service runs release 0.2.0 unpinned, by " + by[0] + "."
	if r.Code != Warning || !strings.HasPrefix(r.Details, want) || strings.Count(r.Details, "api-1") != 1 ||
		!strings.Contains(r.Details, "Rolling back stays possible") || strings.Contains(r.Details, "Run `rivet dbsync") {
		t.Errorf("%s: %s\nwant it to begin %q", r.Code, r.Details, want)
	}
	st.Migrations = append(st.Migrations, Migration{Name: "d", Pending: 1})
	if r := checkMigrations(st); !strings.Contains(r.Details, "Pending: d: 1 object(s). Run `rivet dbsync online-data-migrations`") ||
		strings.Contains(r.Details, "finalizes") {
		t.Errorf("with a runnable migration that needs no release: %s", r.Details)
	}
}
