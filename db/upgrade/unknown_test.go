package upgrade

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/uptrace/bun"
)

// ageService moves a service's last heartbeat back by age, as if it had
// missed its heartbeats for that long.
func ageService(t *testing.T, dbh *db.DB, host, binary string, age time.Duration) {
	t.Helper()
	now, err := dbh.Now(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dbh.Bun().NewUpdate().Table("services").Set("updated_at = ?", now.Add(-age)).
		Where("? = ? AND ? = ?", bun.Ident("hostname"), host, bun.Ident("binary"), binary).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// Issue 23 B: with an old (0.1) and a new API both pin_release_version =
// auto, the old one missing heartbeats for longer than heartbeat_timeout (a
// SIGSTOP, a network partition, or a database outage that stops every
// heartbeat) once let the new one unpin and finalize, so the old one exited
// for good when it woke up and rollback was gone without any operator act.
func TestAutoPinDoesNotFinalizeOnMissedHeartbeats(t *testing.T) {
	const timeout = 6 * time.Second
	for name, outage := range map[string]bool{"old service paused": false, "database outage": true} {
		t.Run(name, func(t *testing.T) {
			dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
				ctx := context.Background()
				dbh := dbtest.Open(t, d)
				tb := oneStep(t)
				r01, _ := tb.Lookup("0.1")
				for _, s := range []db.ServiceRegistration{
					{Hostname: "api-old", Binary: db.BinaryAPI, Release: "0.1.1", ServiceVersion: r01.ServiceVersion, Pin: "auto"},
					{Hostname: "api-new", Binary: db.BinaryAPI, Release: release.Current, ServiceVersion: tb.Head().ServiceVersion, Pin: "auto"},
				} {
					if _, err := dbh.RegisterService(ctx, s); err != nil {
						t.Fatal(err)
					}
				}
				g := NewGuard(dbh, tb, GuardOptions{Name: db.BinaryAPI, Hostname: "api-new", Binaries: []string{db.BinaryAPI}, Timeout: timeout})
				pn := release.NewPinner(tb, release.Pin{Mode: release.PinAuto})
				if err := g.Start(ctx, pn); err != nil {
					t.Fatal(err)
				}
				if pn.Effective().Version != "0.1" {
					t.Fatalf("auto beside a live 0.1 API resolved to %s", pn.Effective().Label())
				}

				ageService(t, dbh, "api-old", db.BinaryAPI, 10*time.Second)
				if outage { // nobody heartbeated; the new API is the first back
					ageService(t, dbh, "api-new", db.BinaryAPI, 10*time.Minute)
					if err := dbh.HeartbeatService(ctx, "api-new", db.BinaryAPI); err != nil {
						t.Fatal(err)
					}
				}
				e, err := g.Follow(ctx, pn)
				if err != nil {
					t.Fatal(err)
				}
				if e.Version != "0.1" {
					t.Errorf("auto moved to %s while the 0.1 API only missed heartbeats", e.Label())
				}
				fr, err := dbh.FinalizedRelease(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if fr.ServiceVersion != r01.ServiceVersion {
					t.Errorf("the finalized release advanced to %s while the 0.1 API only missed heartbeats", fr.Release)
				}
			})
		})
	}
}

// A quiet old service stops counting when an operator forgets it or when
// service_forget_timeout passes; until then an unpin is refused with a note
// naming `rivet upgrade forget`. A forgotten service that was alive after
// all registers again at its next heartbeat and counts again.
func TestQuietServiceUntilForgotten(t *testing.T) {
	const timeout = 6 * time.Second
	tests := map[string]struct {
		forget   time.Duration // GuardOptions.ForgetTimeout
		age      time.Duration // how long the old API has been quiet
		operator bool          // rivet upgrade forget
		gone     bool
	}{
		"quiet, remembered":       {age: time.Hour},
		"forgotten by operator":   {age: time.Minute, operator: true, gone: true},
		"past the forget timeout": {forget: 30 * time.Minute, age: time.Hour, gone: true},
		"within a short timeout":  {forget: 30 * time.Minute, age: 20 * time.Minute},
		"default timeout passed":  {age: 25 * time.Hour, gone: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dbh := dbtest.Open(t, db.SQLite)
			tb := oneStep(t)
			r01, _ := tb.Lookup("0.1")
			for _, s := range []db.ServiceRegistration{
				{Hostname: "api-old", Binary: db.BinaryAPI, Release: "0.1.1", ServiceVersion: r01.ServiceVersion},
				{Hostname: "api-new", Binary: db.BinaryAPI, Release: release.Current, ServiceVersion: tb.Head().ServiceVersion, Pin: "0.1"},
			} {
				if _, err := dbh.RegisterService(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			g := NewGuard(dbh, tb, GuardOptions{Name: db.BinaryAPI, Hostname: "api-new", Binaries: []string{db.BinaryAPI},
				Timeout: timeout, ForgetTimeout: tc.forget})
			pin01, _ := tb.ParsePin("0.1")
			pn := release.NewPinner(tb, pin01)
			if err := g.Start(ctx, pn); err != nil {
				t.Fatal(err)
			}
			ageService(t, dbh, "api-old", db.BinaryAPI, tc.age)
			if tc.operator {
				if _, err := dbh.ForgetService(ctx, "api-old", db.BinaryAPI); err != nil {
					t.Fatal(err)
				}
			}
			// auto first: it must follow only what counts.
			e, err := g.Apply(ctx, pn, release.Pin{Mode: release.PinAuto})
			if err != nil {
				t.Fatal(err)
			}
			if e.IsHead() != tc.gone {
				t.Fatalf("auto resolved to %s, want HEAD only if the old API is gone (%v)", e.Label(), tc.gone)
			}
			_, err = g.Apply(ctx, pn, release.Pin{Mode: release.PinLatest})
			var tooNew *release.PinTooNewError
			if tc.gone {
				if err != nil {
					t.Fatalf("unpin with the old API gone: %v", err)
				}
				fr, _ := dbh.FinalizedRelease(ctx)
				if fr.Release != release.Current {
					t.Fatalf("finalized at %s after the old API went", fr.Release)
				}
				return
			}
			if !errors.As(err, &tooNew) || !strings.Contains(err.Error(), "rivet-api on api-old has not heartbeated for") ||
				!strings.Contains(err.Error(), "run `rivet upgrade forget rivet-api api-old`") {
				t.Fatalf("unpin beside a quiet old API: %v", err)
			}
			if fr, _ := dbh.FinalizedRelease(ctx); fr.ServiceVersion != r01.ServiceVersion {
				t.Fatalf("a refused unpin finalized %s", fr.Release)
			}
		})
	}
}

// A service an operator forgot by mistake comes back at its next heartbeat
// (HeartbeatService says ErrNotFound, the service registers again) and
// counts again.
func TestForgetServiceNotFoundAndBack(t *testing.T) {
	ctx := context.Background()
	dbh := dbtest.Open(t, db.SQLite)
	if _, err := dbh.ForgetService(ctx, "nowhere", db.BinaryAPI); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("forget an unregistered service: %v", err)
	}
	reg := db.ServiceRegistration{Hostname: "api-1", Binary: db.BinaryAPI, Release: "0.1.1", ServiceVersion: 1}
	if _, err := dbh.RegisterService(ctx, reg); err != nil {
		t.Fatal(err)
	}
	s, err := dbh.ForgetService(ctx, "api-1", db.BinaryAPI)
	if err != nil || s.Release != "0.1.1" {
		t.Fatalf("forget: %+v %v", s, err)
	}
	if err := dbh.HeartbeatService(ctx, "api-1", db.BinaryAPI); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("heartbeat of a forgotten service: %v, want ErrNotFound (so it registers again)", err)
	}
	if all, err := dbh.Services(ctx); err != nil || len(all) != 0 {
		t.Fatalf("services after forget: %v %v", all, err)
	}
}

// After the finalize, an old service refused at start (it registers, then
// marks itself offline) leaves a stopped row below the finalized release:
// it must neither pull an automatic pin back down nor refuse an unpin.
func TestRowsBelowTheFinalizedReleaseDoNotCount(t *testing.T) {
	ctx := context.Background()
	dbh := dbtest.Open(t, db.SQLite)
	tb := oneStep(t)
	r01, _ := tb.Lookup("0.1")
	if _, err := dbh.RegisterService(ctx, db.ServiceRegistration{Hostname: "api-new", Binary: db.BinaryAPI, Release: release.Current,
		ServiceVersion: tb.Head().ServiceVersion, Pin: "auto"}); err != nil {
		t.Fatal(err)
	}
	g := NewGuard(dbh, tb, GuardOptions{Name: db.BinaryAPI, Hostname: "api-new", Binaries: []string{db.BinaryAPI}})
	pn := release.NewPinner(tb, release.Pin{Mode: release.PinAuto})
	if err := g.Start(ctx, pn); err != nil || !pn.Effective().IsHead() {
		t.Fatalf("start: %v, effective %s", err, pn.Effective().Label())
	}
	if _, err := dbh.RegisterService(ctx, db.ServiceRegistration{Hostname: "old-api", Binary: db.BinaryAPI, Release: "0.1.1", ServiceVersion: r01.ServiceVersion}); err != nil {
		t.Fatal(err)
	}
	if err := dbh.MarkServiceOffline(ctx, "old-api", db.BinaryAPI); err != nil {
		t.Fatal(err)
	}
	if e, err := g.Follow(ctx, pn); err != nil || !e.IsHead() {
		t.Fatalf("auto beside a refused 0.1 row: %s, %v", e.Label(), err)
	}
	if e, err := g.Apply(ctx, pn, release.Pin{Mode: release.PinLatest}); err != nil || !e.IsHead() {
		t.Fatalf("unpin beside a refused 0.1 row: %s, %v", e.Label(), err)
	}
}
