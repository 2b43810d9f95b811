package upgrade

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// TestGuardWalksAnUpgrade drives a HEAD api (oneStep: 0.1, then HEAD) through an upgrade beside a 0.1 conductor:
// unpinned it is refused, pinned it starts, unpinning is refused until the
// conductor is gone, and the watermark advances only when HEAD is used.
func TestGuardWalksAnUpgrade(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		tb := oneStep(t)
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
		register("api-1", db.BinaryAPI, release.Current, tb.Head().ServiceVersion)
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
		register("cond-1", db.BinaryConductor, release.Current, tb.Head().ServiceVersion)
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

// The skew rule of seed 000 step 3, conductors unpinned before APIs, as
// the guard enforces it between HEAD services (dbtest.Releases: 0.1, HEAD).
func TestGuardEnforcesConductorsBeforeAPIs(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		tb := dbtest.Releases(t)
		head := tb.Head()
		register := func(host, binary, pin string) {
			t.Helper()
			if _, err := dbh.RegisterService(ctx, db.ServiceRegistration{Hostname: host, Binary: binary,
				Release: release.Current, ServiceVersion: head.ServiceVersion, Pin: pin}); err != nil {
				t.Fatal(err)
			}
		}
		pin := func(s string) release.Pin {
			p, err := tb.ParsePin(s)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		rowPin := func(host, binary string) string {
			t.Helper()
			svcs, err := dbh.Services(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range svcs {
				if s.Hostname == host && s.Binary == binary {
					if s.Pin == nil {
						return ""
					}
					return *s.Pin
				}
			}
			t.Fatalf("no row for %s on %s", binary, host)
			return ""
		}
		var logs strings.Builder
		logger := slog.New(slog.NewTextHandler(&logs, nil))
		register("cond-1", db.BinaryConductor, "0.1") // step 2.2: every service HEAD, pinned
		register("api-1", db.BinaryAPI, "")
		api := NewGuard(dbh, tb, GuardOptions{Name: db.BinaryAPI, Hostname: "api-1", Binaries: []string{db.BinaryAPI}, Logger: logger})

		// Unpinned start beside the pinned conductor: refused, naming it
		// and the order.
		var ahead *release.AheadOfConductorError
		err := api.Start(ctx, release.NewPinner(tb, pin("")))
		if !errors.As(err, &ahead) || ahead.Conductor.Name != "rivet-conductor on cond-1" || ahead.At.Version != "0.1" {
			t.Fatalf("unpinned API start beside a conductor pinned to 0.1: %v", err)
		}
		for _, want := range []string{"rivet-conductor on cond-1 (pin_release_version = 0.1) stores objects at release 0.1",
			"Conductors are unpinned first, then APIs", "keep [DEFAULT] pin_release_version = 0.1 (or auto)"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("refusal %q lacks %q", err, want)
			}
		}
		if fr, err := dbh.FinalizedRelease(ctx); err != nil || fr != nil {
			t.Fatalf("a refused start moved the finalized release: %+v, %v", fr, err)
		}

		// Pinned to 0.1 it starts; unpinning by SIGHUP is refused and
		// the running pin kept.
		register("api-1", db.BinaryAPI, "0.1")
		pn := release.NewPinner(tb, pin("0.1"))
		if err := api.Start(ctx, pn); err != nil {
			t.Fatalf("pinned API start: %v", err)
		}
		if _, err := api.Apply(ctx, pn, pin("")); !errors.As(err, &ahead) {
			t.Fatalf("API unpinned before the conductor: %v, want *AheadOfConductorError", err)
		}
		if pn.Pin().Mode != release.PinRelease || pn.Effective().Version != "0.1" || rowPin("api-1", db.BinaryAPI) != "0.1" {
			t.Fatalf("a refused unpin changed state: pin %q, effective %s, row %q", pn.Pin(), pn.Effective().Version, rowPin("api-1", db.BinaryAPI))
		}

		// The conductor cannot be pinned below the API either (going back:
		// APIs first), but pinned to what the API serves it can.
		cond := NewGuard(dbh, tb, GuardOptions{Name: db.BinaryConductor, Hostname: "cond-1", Binaries: []string{db.BinaryConductor}})
		cpn := release.NewPinner(tb, pin("0.1"))
		if err := cond.Start(ctx, cpn); err != nil {
			t.Fatalf("conductor pinned like the API: %v", err)
		}
		// Step 3.1: the conductor is unpinned (SIGHUP), recorded at once.
		if e, err := cond.Apply(ctx, cpn, pin("")); err != nil || !e.IsHead() {
			t.Fatalf("conductor unpin: %v, %v", e.Version, err)
		}
		if got := rowPin("cond-1", db.BinaryConductor); got != "" {
			t.Fatalf("conductor row pin %q right after the SIGHUP, want unpinned", got)
		}
		// Step 3.3: now the API may follow.
		if e, err := api.Apply(ctx, pn, pin("")); err != nil || !e.IsHead() {
			t.Fatalf("API unpin after the conductor: %v, %v", e.Version, err)
		}
		if got := rowPin("api-1", db.BinaryAPI); got != "" {
			t.Fatalf("API row pin %q right after the SIGHUP, want unpinned", got)
		}
		// Re-pinning the conductor below the unpinned API is refused.
		var behind *release.BehindAPIError
		if _, err := cond.Apply(ctx, cpn, pin("0.1")); !errors.As(err, &behind) || behind.API.Name != "rivet-api on api-1" ||
			!strings.Contains(err.Error(), "set [DEFAULT] pin_release_version = 0.1 on rivet-api on api-1 and send it SIGHUP first") {
			t.Fatalf("conductor pinned below an unpinned API: %v", err)
		}
		if !cpn.Effective().IsHead() || rowPin("cond-1", db.BinaryConductor) != "" {
			t.Fatalf("a refused re-pin changed the conductor: %s, row %q", cpn.Effective().Version, rowPin("cond-1", db.BinaryConductor))
		}

		// A conductor pinned older that appears anyway (a race, a
		// heartbeat coming back) brings the running API down at its next
		// heartbeat, whatever its pin, and back up once it is unpinned.
		register("cond-2", db.BinaryConductor, "0.1")
		if e, err := api.Follow(ctx, pn); err != nil || e.Version != "0.1" || pn.Pin().Mode != release.PinLatest {
			t.Fatalf("API heartbeat beside a conductor pinned to 0.1: effective %s, pin %q, %v", e.Version, pn.Pin(), err)
		}
		if !strings.Contains(logs.String(), "rivet-conductor on cond-2") {
			t.Errorf("the API did not log which conductor holds it down:\n%s", logs.String())
		}
		if err := dbh.SetServicePin(ctx, "cond-2", db.BinaryConductor, ""); err != nil {
			t.Fatal(err)
		}
		if e, err := api.Follow(ctx, pn); err != nil || !e.IsHead() {
			t.Fatalf("API heartbeat once every conductor is unpinned: %s, %v", e.Version, err)
		}

		// auto on an API follows the conductors instead of refusing.
		register("cond-2", db.BinaryConductor, "0.1")
		apn := release.NewPinner(tb, pin("auto"))
		if e, err := api.Apply(ctx, apn, pin("auto")); err != nil || e.Version != "0.1" {
			t.Fatalf("auto API beside a conductor pinned to 0.1: %s, %v", e.Version, err)
		}
	})
}
