package onlinemigrations

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
)

// ErrRefused is wrapped by refusals to run (exit code 2): a service is
// too old for a migration, or still pinned below it.
var ErrRefused = errors.New("refused")

// The gate (ARCHITECTURE §4, seeds/000 "Online data migrations"): a
// migration declaring MinServiceVersion N writes what only services of N and
// newer can read, so it is what the seed's step 3 (unpinning) is to a
// service: the end of the rollback window. It may run only when
//
//   - every known service (db.ServiceState.Known: live, unknown or stopped,
//     not forgotten) runs service version N or newer: a service that merely
//     went quiet may come back as it was; and
//   - no known service is pinned to a release below N: a pinned service
//     keeps writing the old versions, and the operator keeps it pinned to
//     be able to roll back. An "auto" pin counts as the oldest known
//     service, already checked; every release records its pin, so no row
//     has an unknown one (a NULL pin is "unpinned").
//
// Once the fleet is there the runner raises the finalized release to N's
// release before it writes anything, so an older binary started later
// refuses to start (naming both releases) instead of failing on the rows it
// cannot read; with the fleet there, that watermark is where the unpinned
// services put it anyway.

// Blocker is a known service that keeps a migration from running.
type Blocker struct {
	Service db.Service
	State   db.ServiceState
	// Pinned is set when the service runs a new enough release but is
	// pinned below the migration (or to a release this binary does not
	// know); otherwise it is too old.
	Pinned bool
}

// String names the service, its release, service version, pin and state:
// "rivet-api on api-1 (release 0.2.0, service version 2, pinned to 0.1, live)".
func (b Blocker) String() string {
	s := b.Service
	pin := "unpinned"
	if s.Pin != nil && *s.Pin != "" {
		pin = "pinned to " + *s.Pin
	}
	what := fmt.Sprintf("%s (release %s, service version %d, %s, %s", s.Name(), s.Release, s.ServiceVersion, pin, b.State)
	if b.State != db.ServiceLive {
		what += ": last heard from " + s.UpdatedAt.UTC().Format(time.RFC3339)
	}
	return what + ")"
}

// Blocking returns the services of svcs (classified at now by lv) that keep
// a migration needing minServiceVersion from running; table parses their
// pins. Gone services do not block, nor do stopped ones older than the
// finalized release finalizedSV (0 for none): the finalize has shut them
// out for good. One still running below it (live or unknown) blocks until
// it stops, which it does at its next heartbeat.
func Blocking(svcs []db.Service, now time.Time, lv db.Liveness, finalizedSV int, table *release.Table, minServiceVersion int) []Blocker {
	if minServiceVersion <= 0 {
		return nil
	}
	var out []Blocker
	for _, s := range svcs {
		st := s.State(now, lv)
		if !st.Known() || (st == db.ServiceStopped && s.ServiceVersion < finalizedSV) {
			continue
		}
		if s.ServiceVersion < minServiceVersion {
			out = append(out, Blocker{Service: s, State: st})
			continue
		}
		if s.Pin == nil || *s.Pin == "" {
			continue
		}
		p, err := table.ParsePin(*s.Pin)
		if err != nil || (p.Mode == release.PinRelease && p.Release.ServiceVersion < minServiceVersion) {
			out = append(out, Blocker{Service: s, State: st, Pinned: true})
		}
	}
	return out
}

// NotReadyError refuses migrations while services are too old for them or
// pinned below them: the migrations that need MinServiceVersion, named
// together since the same services block them.
type NotReadyError struct {
	Migrations        []string
	MinServiceVersion int
	// Release is the release that writes the new form: the release table
	// entry of MinServiceVersion.
	Release  release.Entry
	Blockers []Blocker
}

// Error names the migration, the release it needs and every blocking
// service, and says what to do.
func (e *NotReadyError) Error() string {
	var old, pinned []string
	for _, b := range e.Blockers {
		if b.Pinned {
			pinned = append(pinned, b.String())
		} else {
			old = append(old, b.String())
		}
	}
	var parts []string
	if len(old) > 0 {
		parts = append(parts, "older: "+strings.Join(old, ", "))
	}
	if len(pinned) > 0 {
		parts = append(parts, "still pinned below it: "+strings.Join(pinned, ", "))
	}
	what := "online migration " + e.Migrations[0] + " writes"
	if len(e.Migrations) > 1 {
		what = "online migrations " + strings.Join(e.Migrations, ", ") + " write"
	}
	return fmt.Sprintf("%s what only release %s (service version %d) and newer can read, "+
		"so they run only after every service runs that release unpinned (step 3 of the rolling upgrade), but %s. "+
		"Running them now would break rolling back. Upgrade those services, then unpin them "+
		"(pin_release_version empty or auto, SIGHUP, conductors first): unpinning finalizes the release and ends the rollback window. "+
		"A service that is gone for good: `rivet upgrade forget BINARY HOST`. Then re-run",
		what, releaseName(e.Release), e.MinServiceVersion, strings.Join(parts, "; "))
}

// releaseName names e for operators: `0.1 ("anvil")`, or this build's
// release string for HEAD.
func releaseName(e release.Entry) string {
	if e.IsHead() {
		return release.Current
	}
	return e.Label()
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *NotReadyError) Is(target error) bool { return target == ErrRefused }

// Gate checks the services registry before migrations run.
type Gate struct {
	DB *db.DB
	// Table parses the services' pins and names releases; nil means
	// release.Default().
	Table    *release.Table
	Liveness db.Liveness
	// Notes receives what the gate did besides checking (the finalized
	// release advancing); nil discards.
	Notes io.Writer
}

func (g Gate) table() *release.Table {
	if g.Table != nil {
		return g.Table
	}
	return release.Default()
}

// needs is the highest MinServiceVersion of ms; 0 when none needs one.
func needs(ms []Migration) int {
	n := 0
	for _, m := range ms {
		n = max(n, m.MinServiceVersion)
	}
	return n
}

// Check refuses (a *NotReadyError per service version blocked, joined)
// while a service that counts is too old for a migration of ms or pinned
// below it.
func (g Gate) Check(ctx context.Context, ms []Migration) error {
	if needs(ms) == 0 {
		return nil
	}
	now, err := g.DB.Now(ctx)
	if err != nil {
		return err
	}
	svcs, err := g.DB.Services(ctx)
	if err != nil {
		return err
	}
	fin := 0
	if fr, err := g.DB.FinalizedRelease(ctx); err != nil {
		return err
	} else if fr != nil {
		fin = fr.ServiceVersion
	}
	var errs []error
	byVersion := map[int]*NotReadyError{}
	for _, m := range ms {
		if e := byVersion[m.MinServiceVersion]; e != nil {
			e.Migrations = append(e.Migrations, m.Name)
			continue
		}
		if bs := Blocking(svcs, now, g.Liveness, fin, g.table(), m.MinServiceVersion); len(bs) > 0 {
			rel, _ := g.table().ForServiceVersion(m.MinServiceVersion)
			e := &NotReadyError{Migrations: []string{m.Name}, MinServiceVersion: m.MinServiceVersion, Release: rel, Blockers: bs}
			byVersion[m.MinServiceVersion] = e
			errs = append(errs, e)
		}
	}
	return errors.Join(errs...)
}

// Open checks, then raises the finalized release to the release the
// migrations of ms need (when it is below), then checks again: a service
// that registered before the watermark moved is seen by the second check,
// and one registering after it refuses to start. After Open succeeds no
// service the migrations' rows would break can start.
func (g Gate) Open(ctx context.Context, ms []Migration) error {
	need := needs(ms)
	if need == 0 {
		return nil
	}
	if err := g.Check(ctx, ms); err != nil {
		return err
	}
	e, ok := g.table().ForServiceVersion(need)
	if !ok {
		return fmt.Errorf("online migrations need service version %d, older than any release this binary knows", need)
	}
	fr, advanced, err := g.DB.AdvanceFinalizedRelease(ctx, e.Release(), e.ServiceVersion)
	if err != nil {
		return err
	}
	if advanced && g.Notes != nil {
		fmt.Fprintf(g.Notes, "Finalized release advanced to %s (service version %d) before migrating: services older than it can no longer start.\n",
			fr.Release, fr.ServiceVersion)
	}
	return g.Check(ctx, ms)
}
