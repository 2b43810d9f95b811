package upgrade

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/db/onlinemigrations"
)

func codes(rs []Result) map[string]Code {
	out := map[string]Code{}
	for _, r := range rs {
		out[r.Check] = r.Code
	}
	return out
}

func details(rs []Result, check string) string {
	for _, r := range rs {
		if r.Check == check {
			return r.Details
		}
	}
	return ""
}

// TestCheckWalksAnUpgrade follows a deployment through a 0.1 → HEAD upgrade
// (dbtest.Releases: 0.1 has service version 1, HEAD 2) and checks
// what upgrade check says at each point.
func TestCheckWalksAnUpgrade(t *testing.T) {
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
		check := func(dbh *db.DB) []Result {
			t.Helper()
			rs, err := Check(ctx, dbh, tb, mreg, db.Liveness{Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			return rs
		}

		empty := dbtest.OpenEmpty(t, d)
		if rs := check(empty); Worst(rs) != Failure || !strings.Contains(details(rs, "Database schema"), "create-schema") {
			t.Fatalf("empty database: %+v", rs)
		}

		dbh := dbtest.Open(t, d)
		want := map[string]Code{"Database schema": Success, "Object versions": Success, "Service versions": Success,
			"Release pins": Success, "Finalized release": Success, "Online data migrations": Success}
		if diff := cmp.Diff(want, codes(check(dbh))); diff != "" {
			t.Fatalf("fresh deployment (-want +got):\n%s", diff)
		}

		// Step 1.1: a 0.1 API and conductor, one conductor upgraded and pinned.
		pin := "0.1"
		for _, s := range []db.ServiceRegistration{
			{Hostname: "api-1", Binary: db.BinaryAPI, Release: "0.1.0", ServiceVersion: 1},
			{Hostname: "cond-1", Binary: db.BinaryConductor, Release: "0.1.0", ServiceVersion: 1},
			{Hostname: "cond-2", Binary: db.BinaryConductor, Release: release.Current, ServiceVersion: tb.Head().ServiceVersion, Pin: pin},
		} {
			if _, err := dbh.RegisterService(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		pinned, _ := tb.ParsePin("0.1")
		s := db.NewStore(dbh, reg, release.NewPinner(tb, pinned))
		for i := range 3 {
			obj, _ := reg.New("Node")
			n := obj.(*objects.Node)
			n.UUID, n.Driver = fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i), "fake-hardware"
			if err := s.Create(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
		rs := check(dbh)
		if codes(rs)["Service versions"] != Warning || !strings.Contains(details(rs, "Service versions"), "rolling upgrade is in progress") {
			t.Fatalf("mixed services: %+v", rs)
		}
		if codes(rs)["Release pins"] != Success {
			t.Fatalf("pins flagged mid-upgrade: %+v", rs)
		}
		if codes(rs)["Online data migrations"] != Warning || !strings.Contains(details(rs, "Online data migrations"), "update_to_latest_versions: 3 object(s)") {
			t.Fatalf("pending migrations: %+v", rs)
		}
		st, err := Collect(ctx, dbh, tb, mreg, db.Liveness{Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if r01, _ := tb.Lookup("0.1"); st.AutoPin != r01.Label() {
			t.Fatalf("auto pin = %q", st.AutoPin)
		}

		// Step 3: everything on HEAD, still pinned: the pin check warns.
		for _, h := range []struct{ host, binary string }{{"api-1", db.BinaryAPI}, {"cond-1", db.BinaryConductor}} {
			if _, err := dbh.RegisterService(ctx, db.ServiceRegistration{Hostname: h.host, Binary: h.binary, Release: release.Current, ServiceVersion: tb.Head().ServiceVersion, Pin: pin}); err != nil {
				t.Fatal(err)
			}
		}
		rs = check(dbh)
		if codes(rs)["Service versions"] != Success || codes(rs)["Release pins"] != Warning {
			t.Fatalf("all upgraded, still pinned: %+v", rs)
		}
		// The API unpinned before the conductor: out of order, a failure
		// naming both and the order.
		register := func(host, binary, pin string) {
			t.Helper()
			if _, err := dbh.RegisterService(ctx, db.ServiceRegistration{Hostname: host, Binary: binary, Release: release.Current, ServiceVersion: tb.Head().ServiceVersion, Pin: pin}); err != nil {
				t.Fatal(err)
			}
		}
		register("api-1", db.BinaryAPI, "")
		rs = check(dbh)
		if got := details(rs, "Release pins"); codes(rs)["Release pins"] != Failure ||
			!strings.Contains(got, "rivet-api on api-1 (unpinned) asks for a newer release than rivet-conductor on cond-1 (pin "+pin+") stores, release 0.1") ||
			!strings.Contains(got, "Conductors are unpinned first, then APIs") {
			t.Fatalf("API unpinned before the conductor: %+v", rs)
		}
		// Status shows what each service uses: the API is held at what
		// the pinned conductors store.
		uses := func() map[string]string {
			t.Helper()
			st, err := Collect(ctx, dbh, tb, mreg, db.Liveness{Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for _, s := range st.Services {
				if s.Live {
					out[s.Name()] = s.Uses
				}
			}
			return out
		}
		r01, _ := tb.Lookup("0.1")
		if got := uses(); got["rivet-api on api-1"] != r01.Label() || got["rivet-conductor on cond-1"] != r01.Label() {
			t.Fatalf("status uses, API unpinned before the conductors: %v", got)
		}
		// In order: both unpinned, nothing to say.
		register("cond-1", db.BinaryConductor, "")
		register("cond-2", db.BinaryConductor, "")
		if rs = check(dbh); codes(rs)["Release pins"] != Success {
			t.Fatalf("conductor then API unpinned: %+v", rs)
		}
		if got := uses(); got["rivet-api on api-1"] != release.HeadKey || got["rivet-conductor on cond-1"] != release.HeadKey {
			t.Fatalf("status uses, all unpinned: %v", got)
		}

		// Finalized above a live service: it is reported as blocked.
		if _, _, err := dbh.AdvanceFinalizedRelease(ctx, release.Current, tb.Head().ServiceVersion); err != nil {
			t.Fatal(err)
		}
		if _, err := dbh.RegisterService(ctx, db.ServiceRegistration{Hostname: "cond-3", Binary: db.BinaryConductor, Release: "0.1.0", ServiceVersion: 1}); err != nil {
			t.Fatal(err)
		}
		rs = check(dbh)
		if codes(rs)["Finalized release"] != Failure || !strings.Contains(details(rs, "Finalized release"), "rivet-conductor on cond-3 (release 0.1.0, service version 1)") {
			t.Fatalf("finalized above a live service: %+v", rs)
		}
		if st, err := Collect(ctx, dbh, tb, mreg, db.Liveness{Timeout: time.Minute}); err != nil || st.Finalized == nil || st.Finalized.Release != release.Current {
			t.Fatalf("status finalized release: %+v, %v", st, err)
		}
		if err := dbh.MarkServiceOffline(ctx, "cond-3", db.BinaryConductor); err != nil {
			t.Fatal(err)
		}
		if rs := check(dbh); codes(rs)["Finalized release"] != Success || !strings.Contains(details(rs, "Finalized release"), fmt.Sprintf("release %s (service version %d)", release.Current, tb.Head().ServiceVersion)) {
			t.Fatalf("finalized, nothing blocked: %+v", rs)
		}
		// Finalized above this binary: its services cannot start.
		above := tb.Head().ServiceVersion + 1
		if _, _, err := dbh.AdvanceFinalizedRelease(ctx, "9.0.0", above); err != nil {
			t.Fatal(err)
		}
		if rs := check(dbh); codes(rs)["Finalized release"] != Failure || !strings.Contains(details(rs, "Finalized release"), "refuse to start. Run 9.0.0 or newer") {
			t.Fatalf("finalized above this binary: %+v", rs)
		}

		// A row this release cannot read is a failure.
		if _, err := dbh.Bun().NewUpdate().Table(db.TableNodes).Set("version = ?", "7.0").Where("uuid = ?", "00000000-0000-0000-0000-000000000000").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if rs := check(dbh); codes(rs)["Object versions"] != Failure || Worst(rs) != Failure {
			t.Fatalf("unreadable row: %+v", rs)
		}
		// A live service older than anything the table knows is a failure.
		if _, err := dbh.RegisterService(ctx, db.ServiceRegistration{Hostname: "ancient", Binary: db.BinaryConductor, Release: "0.0.1", ServiceVersion: 0}); err != nil {
			t.Fatal(err)
		}
		if rs := check(dbh); codes(rs)["Service versions"] != Failure {
			t.Fatalf("ancient service: %+v", rs)
		}
	})
}
