package upgrade

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// TestGuardWalksAnUpgrade drives a HEAD api (dbtest.Releases: 0.1 has
// service version 1, HEAD 2) through an upgrade beside a 0.1 conductor:
// unpinned it is refused, pinned it starts, unpinning is refused until the
// conductor is gone, and the watermark advances only when HEAD is used.
func TestGuardWalksAnUpgrade(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		tb := dbtest.Releases(t)
		register := func(host, binary, rel string, sv int) {
			t.Helper()
			if _, err := dbh.RegisterService(ctx, db.ServiceRegistration{Hostname: host, Binary: binary, Release: rel, ServiceVersion: sv}); err != nil {
				t.Fatal(err)
			}
		}
		finalized := func() string {
			t.Helper()
			fr, err := dbh.FinalizedRelease(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if fr == nil {
				return "none"
			}
			return fr.Release
		}
		register("cond-1", db.BinaryConductor, "0.1.0", 1)
		register("api-1", db.BinaryAPI, release.Current, 2)
		g := NewGuard(dbh, tb, GuardOptions{Name: db.BinaryAPI, Hostname: "api-1", Binaries: []string{db.BinaryAPI}})
		pin := func(s string) release.Pin {
			p, err := tb.ParsePin(s)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}

		pn := release.NewPinner(tb, pin(""))
		err := g.Start(ctx, pn)
		var tooNew *release.PinTooNewError
		if !errors.As(err, &tooNew) || !strings.Contains(err.Error(), "rivet-conductor on cond-1 runs release 0.1.0") ||
			!strings.Contains(err.Error(), "pin_release_version = 0.1 (or auto)") {
			t.Fatalf("unpinned start beside 0.1: %v", err)
		}
		if finalized() != "none" {
			t.Fatalf("a refused start advanced the watermark to %s", finalized())
		}

		pn = release.NewPinner(tb, pin("0.1"))
		if err := g.Start(ctx, pn); err != nil {
			t.Fatalf("pinned start: %v", err)
		}
		if pn.Effective().Version != "0.1" || finalized() != "0.1" {
			t.Fatalf("pinned start: effective %s, finalized %s", pn.Effective().Version, finalized())
		}
		if _, err := g.Apply(ctx, pn, pin("")); !errors.As(err, &tooNew) {
			t.Fatalf("unpin beside 0.1: %v, want *PinTooNewError", err)
		}
		if pn.Pin().Mode != release.PinRelease || pn.Effective().Version != "0.1" || finalized() != "0.1" {
			t.Fatalf("a refused unpin changed state: pin %q effective %s finalized %s", pn.Pin(), pn.Effective().Version, finalized())
		}
		// auto follows the oldest live service, then the conductor upgrades.
		if e, err := g.Apply(ctx, pn, pin("auto")); err != nil || e.Version != "0.1" {
			t.Fatalf("auto beside 0.1: %s, %v", e.Version, err)
		}
		register("cond-1", db.BinaryConductor, release.Current, 2)
		if e, err := g.Follow(ctx, pn); err != nil || !e.IsHead() || finalized() != release.Current {
			t.Fatalf("auto after the upgrade: %s, %v, finalized %s", e.Version, err, finalized())
		}

		// A 0.1 service now refuses to start, and one still running stops.
		oldHead := tb.Releases()[0] // the 0.1 binary's own table: HEAD at service version 1
		oldHead.Version, oldHead.Name = release.HeadKey, ""
		old, err := release.NewTable(oldHead)
		if err != nil {
			t.Fatal(err)
		}
		og := NewGuard(dbh, old, GuardOptions{Name: db.BinaryConductor, Hostname: "cond-2", Binaries: []string{db.BinaryConductor}})
		var tooOld *release.ServiceTooOldError
		if err := og.Start(ctx, release.NewPinner(old, release.Pin{})); !errors.As(err, &tooOld) {
			t.Fatalf("0.1 start after finalize: %v, want *ServiceTooOldError", err)
		}
		if err := og.CheckRunning(ctx); !errors.As(err, &tooOld) {
			t.Fatalf("0.1 running after finalize: %v", err)
		}
		if err := g.CheckRunning(ctx); err != nil {
			t.Fatalf("HEAD running after finalize: %v", err)
		}

		// A service older than any release HEAD knows: more than one ahead.
		register("ancient", db.BinaryConductor, "0.0.1", 0)
		var ahead *release.TooFarAheadError
		if err := g.Start(ctx, pn); !errors.As(err, &ahead) || !strings.Contains(err.Error(), "rivet-conductor on ancient runs release 0.0.1") {
			t.Fatalf("beside an ancient service: %v", err)
		}
	})
}
