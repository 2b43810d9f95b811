package onlinemigrations

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// Blocking counts every known service (live, unknown, stopped) against a
// migration needing service version 2 (HEAD of the test table; 0.1 is 1):
// too old, or pinned below; "auto", unpinned and pins at 2 pass; gone
// services and migrations needing nothing never block.
func TestBlocking(t *testing.T) {
	tb := dbtest.Releases(t)
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	lv := db.Liveness{Timeout: time.Minute, Forget: time.Hour}
	str := func(s string) *string { return &s }
	svc := func(sv int, pin *string, online bool, age time.Duration) db.Service {
		return db.Service{Hostname: "h", Binary: db.BinaryAPI, Release: "r", ServiceVersion: sv, Pin: pin, Online: online, UpdatedAt: now.Add(-age)}
	}
	tests := map[string]struct {
		svc     db.Service
		min     int
		fin     int // finalized service version
		blocks  bool
		pinned  bool
		stateIs db.ServiceState
	}{
		"old live":                 {svc: svc(1, nil, true, 0), min: 2, blocks: true, stateIs: db.ServiceLive},
		"old unknown":              {svc: svc(1, nil, true, 10*time.Minute), min: 2, blocks: true, stateIs: db.ServiceUnknown},
		"old stopped":              {svc: svc(1, nil, false, 10*time.Minute), min: 2, blocks: true, stateIs: db.ServiceStopped},
		"old gone":                 {svc: svc(1, nil, true, 2*time.Hour), min: 2},
		"old stopped long ago":     {svc: svc(1, nil, false, 2*time.Hour), min: 2},
		"new pinned 0.1":           {svc: svc(2, str("0.1"), true, 0), min: 2, blocks: true, pinned: true, stateIs: db.ServiceLive},
		"new pinned by name":       {svc: svc(2, str("anvil"), true, 0), min: 2, blocks: true, pinned: true, stateIs: db.ServiceLive},
		"new pinned, unknown":      {svc: svc(2, str("0.1"), true, 5*time.Minute), min: 2, blocks: true, pinned: true, stateIs: db.ServiceUnknown},
		"new pinned to a stranger": {svc: svc(2, str("9.9"), true, 0), min: 2, blocks: true, pinned: true, stateIs: db.ServiceLive},
		"new auto":                 {svc: svc(2, str("auto"), true, 0), min: 2},
		"new unpinned":             {svc: svc(2, nil, true, 0), min: 2},
		"new empty pin":            {svc: svc(2, str(""), true, 0), min: 2},
		"pinned 0.1, needs 1":      {svc: svc(2, str("0.1"), true, 0), min: 1},
		"old, needs nothing":       {svc: svc(1, nil, true, 0), min: 0},
		"old stopped, finalized":   {svc: svc(1, nil, false, time.Minute), min: 2, fin: 2},
		"old live, finalized":      {svc: svc(1, nil, true, 0), min: 2, fin: 2, blocks: true, stateIs: db.ServiceLive},
		"pinned, finalized":        {svc: svc(2, str("0.1"), true, 0), min: 2, fin: 2, blocks: true, pinned: true, stateIs: db.ServiceLive},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			bs := Blocking([]db.Service{tc.svc}, now, lv, tc.fin, tb, tc.min)
			if got := len(bs) > 0; got != tc.blocks {
				t.Fatalf("blocks = %v (%v), want %v", got, bs, tc.blocks)
			}
			if tc.blocks && (bs[0].Pinned != tc.pinned || bs[0].State != tc.stateIs) {
				t.Errorf("blocker %+v, want pinned %v state %s", bs[0], tc.pinned, tc.stateIs)
			}
		})
	}
}

func TestBlockerString(t *testing.T) {
	pin := "0.1"
	at := time.Date(2026, 11, 27, 7, 0, 0, 0, time.UTC)
	s := db.Service{Hostname: "api-1", Binary: db.BinaryAPI, Release: "0.2.0", ServiceVersion: 2, Pin: &pin, UpdatedAt: at}
	got := []string{Blocker{Service: s, State: db.ServiceLive, Pinned: true}.String(), Blocker{Service: s, State: db.ServiceUnknown}.String()}
	want := []string{"rivet-api on api-1 (release 0.2.0, service version 2, pinned to 0.1, live)",
		"rivet-api on api-1 (release 0.2.0, service version 2, pinned to 0.1, unknown: last heard from 2026-11-27T07:00:00Z)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

// The gate refuses while a 0.1 service is unknown (it missed heartbeats),
// runs once it is forgotten, and then raises the finalized release to the
// migration's release before anything is written, saying so.
func TestGateOpen(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		tb := dbtest.Releases(t)
		head := tb.Head().ServiceVersion
		for _, s := range []db.ServiceRegistration{
			{Hostname: "api-old", Binary: db.BinaryAPI, Release: "0.1.1", ServiceVersion: 1},
			{Hostname: "api-new", Binary: db.BinaryAPI, Release: release.Current, ServiceVersion: head, Pin: "auto"},
		} {
			if _, err := dbh.RegisterService(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		now, err := dbh.Now(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dbh.Bun().NewUpdate().Model((*db.Service)(nil)).Set("updated_at = ?", now.Add(-10*time.Minute)).
			Where("hostname = ?", "api-old").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		ms := []Migration{{Name: "m", MinServiceVersion: head}}
		var notes bytes.Buffer
		g := Gate{DB: dbh, Table: tb, Liveness: db.Liveness{Timeout: time.Minute}, Notes: &notes}
		var nr *NotReadyError
		err = g.Open(ctx, ms)
		if !errors.Is(err, ErrRefused) || !errors.As(err, &nr) || len(nr.Blockers) != 1 || nr.Blockers[0].State != db.ServiceUnknown ||
			!strings.Contains(err.Error(), "older: rivet-api on api-old (release 0.1.1, service version 1, unpinned, unknown") ||
			!strings.Contains(err.Error(), "rivet upgrade forget") {
			t.Fatalf("with an unknown 0.1 service: %v", err)
		}
		if fr, err := dbh.FinalizedRelease(ctx); err != nil || fr != nil {
			t.Fatalf("a refusal moved the finalized release: %+v %v", fr, err)
		}
		if _, err := dbh.ForgetService(ctx, "api-old", db.BinaryAPI); err != nil {
			t.Fatal(err)
		}
		if err := g.Open(ctx, ms); err != nil {
			t.Fatalf("after forgetting the 0.1 service: %v", err)
		}
		fr, err := dbh.FinalizedRelease(ctx)
		if err != nil || fr == nil || fr.ServiceVersion != head || fr.Release != release.Current {
			t.Fatalf("finalized release after the gate opened: %+v %v", fr, err)
		}
		if want := "Finalized release advanced to " + release.Current; !strings.HasPrefix(notes.String(), want) {
			t.Errorf("notes %q, want %q…", notes.String(), want)
		}
		notes.Reset()
		if err := g.Open(ctx, ms); err != nil || notes.Len() != 0 {
			t.Fatalf("second open: %v, notes %q", err, notes.String())
		}
		// Migrations that need no service version never read the registry.
		if err := (Gate{}).Open(ctx, []Migration{{Name: "free"}}); err != nil {
			t.Fatal(err)
		}
	})
}
