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

// A services row is live within heartbeat_timeout, gone beyond
// service_forget_timeout, and in between unknown (online: it only stopped
// heartbeating) or stopped (a clean shutdown); every state but gone is
// known, and a known row older than the finalized release does not count.
func TestServiceState(t *testing.T) {
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	lv := db.Liveness{Timeout: time.Minute, Forget: time.Hour}
	tests := []struct {
		online bool
		age    time.Duration
		lv     db.Liveness
		want   db.ServiceState
	}{
		{true, 30 * time.Second, lv, db.ServiceLive},
		{true, time.Minute, lv, db.ServiceUnknown},
		{true, 59 * time.Minute, lv, db.ServiceUnknown},
		{true, time.Hour, lv, db.ServiceGone},
		{false, 0, lv, db.ServiceStopped},
		{false, 59 * time.Minute, lv, db.ServiceStopped},
		{false, 2 * time.Hour, lv, db.ServiceGone},
		// Zero timeouts mean the defaults: 60 s and 24 h.
		{true, 59 * time.Second, db.Liveness{}, db.ServiceLive},
		{true, 23 * time.Hour, db.Liveness{}, db.ServiceUnknown},
		{true, 24 * time.Hour, db.Liveness{}, db.ServiceGone},
	}
	for _, tc := range tests {
		s := db.Service{Online: tc.online, UpdatedAt: now.Add(-tc.age), ServiceVersion: 1}
		got := s.State(now, tc.lv)
		if got != tc.want {
			t.Errorf("online %v, quiet %v, %+v: %s, want %s", tc.online, tc.age, tc.lv, got, tc.want)
		}
		if known := got != db.ServiceGone; got.Known() != known || s.Counts(now, tc.lv, 1) != known || s.Counts(now, tc.lv, 2) {
			t.Errorf("online %v, quiet %v: Known %v, Counts(1) %v, Counts(2) %v", tc.online, tc.age, got.Known(), s.Counts(now, tc.lv, 1), s.Counts(now, tc.lv, 2))
		}
	}
}
