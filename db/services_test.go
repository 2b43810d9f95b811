package db_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

func TestServicesRegistryLiveness(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		reg := []db.ServiceRegistration{
			{Hostname: "h1", Binary: db.BinaryConductor, Release: "0.1.0", ServiceVersion: 1},
			{Hostname: "h2", Binary: db.BinaryConductor, Release: "0.1.0", ServiceVersion: 1},
			{Hostname: "h1", Binary: db.BinaryAPI, Release: "0.1.0", ServiceVersion: 1, Pin: "auto"},
			{Hostname: "h3", Binary: db.BinaryAPI, Release: "0.1.0", ServiceVersion: 1},
		}
		for _, r := range reg {
			if _, err := dbh.RegisterService(ctx, r); err != nil {
				t.Fatalf("register %+v: %v", r, err)
			}
		}
		// h1's conductor restarts on a newer release: same row, new facts.
		s, err := dbh.RegisterService(ctx, db.ServiceRegistration{Hostname: "h1", Binary: db.BinaryConductor, Release: "0.2.0", ServiceVersion: 2})
		if err != nil {
			t.Fatal(err)
		}
		if s.Release != "0.2.0" || s.ServiceVersion != 2 || !s.Online || s.Pin != nil {
			t.Errorf("re-registered row: %+v", s)
		}
		// h2's conductor stops heartbeating; h3's api shuts down cleanly.
		if _, err := dbh.Bun().NewUpdate().Table("services").Set("updated_at = ?", time.Now().UTC().Add(-2*time.Minute)).
			Where("hostname = 'h2'").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := dbh.MarkServiceOffline(ctx, "h3", db.BinaryAPI); err != nil {
			t.Fatal(err)
		}
		if err := dbh.HeartbeatService(ctx, "h1", db.BinaryAPI); err != nil {
			t.Fatal(err)
		}
		if err := dbh.HeartbeatService(ctx, "nowhere", db.BinaryAPI); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("heartbeat of an unregistered service: %v, want ErrNotFound", err)
		}

		live, err := dbh.LiveServices(ctx, db.DefaultServiceTimeout)
		if err != nil {
			t.Fatal(err)
		}
		all, err := dbh.Services(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"rivet-api on h1", "rivet-conductor on h1"}, names(live)); diff != "" {
			t.Errorf("live services (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"rivet-api on h1", "rivet-api on h3", "rivet-conductor on h1", "rivet-conductor on h2"}, names(all)); diff != "" {
			t.Errorf("all services (-want +got):\n%s", diff)
		}
		if live[0].Pin == nil || *live[0].Pin != "auto" {
			t.Errorf("api pin = %v, want auto", live[0].Pin)
		}
	})
}

func names(ss []db.Service) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name()
	}
	return out
}

func TestIsUniqueViolation(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		insertNode(t, dbh, "10000000-0000-0000-0000-000000000001")
		tests := map[string]struct {
			node *db.Node
			want bool
		}{
			"duplicate uuid": {&db.Node{UUID: "10000000-0000-0000-0000-000000000001", Driver: "x"}, true},
			"missing chassis": {&db.Node{UUID: "10000000-0000-0000-0000-000000000002", Driver: "x",
				ChassisID: ptr(int64(999))}, false},
		}
		for name, tc := range tests {
			_, err := dbh.Bun().NewInsert().Model(tc.node).Exec(ctx)
			if err == nil {
				t.Errorf("%s: insert succeeded", name)
				continue
			}
			if got := db.IsUniqueViolation(err); got != tc.want {
				t.Errorf("%s: IsUniqueViolation(%v) = %v, want %v", name, err, got, tc.want)
			}
		}
		if db.IsUniqueViolation(nil) || db.IsUniqueViolation(errors.New("UNIQUE constraint failed")) {
			t.Error("IsUniqueViolation trusts message text or nil")
		}
	})
}

// SetServicePin changes only the pin of one registered service (a SIGHUP
// reload recorded at once) and says when the service is not registered.
func TestSetServicePin(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		for _, r := range []db.ServiceRegistration{
			{Hostname: "h1", Binary: db.BinaryConductor, Release: "0.2.0", ServiceVersion: 2, Pin: "0.1"},
			{Hostname: "h1", Binary: db.BinaryAPI, Release: "0.2.0", ServiceVersion: 2, Pin: "0.1"},
		} {
			if _, err := dbh.RegisterService(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		pins := func() map[string]string {
			t.Helper()
			svcs, err := dbh.Services(ctx)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for _, s := range svcs {
				out[s.Binary] = "<nil>"
				if s.Pin != nil {
					out[s.Binary] = *s.Pin
				}
				if s.Release != "0.2.0" || s.ServiceVersion != 2 || !s.Online {
					t.Errorf("SetServicePin changed more than the pin: %+v", s)
				}
			}
			return out
		}
		if err := dbh.SetServicePin(ctx, "h1", db.BinaryConductor, ""); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]string{db.BinaryConductor: "<nil>", db.BinaryAPI: "0.1"}, pins()); diff != "" {
			t.Errorf("after unpinning the conductor (-want +got):\n%s", diff)
		}
		if err := dbh.SetServicePin(ctx, "h1", db.BinaryAPI, "auto"); err != nil {
			t.Fatal(err)
		}
		// The same pin again (a SIGHUP that changed another option) is
		// no error on any database, MySQL's affected-rows count included.
		if err := dbh.SetServicePin(ctx, "h1", db.BinaryAPI, "auto"); err != nil {
			t.Fatalf("same pin again: %v", err)
		}
		if diff := cmp.Diff(map[string]string{db.BinaryConductor: "<nil>", db.BinaryAPI: "auto"}, pins()); diff != "" {
			t.Errorf("after the API's auto (-want +got):\n%s", diff)
		}
		if err := dbh.SetServicePin(ctx, "h9", db.BinaryAPI, ""); !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("unregistered service: %v, want ErrNotFound", err)
		}
	})
}
