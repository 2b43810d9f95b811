package upgrade

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
)

// Guard enforces the finalized-release rules (ARCHITECTURE §4) for one
// service process: it refuses to start a service older than the watermark,
// more than one release ahead of the oldest live service, or at an
// effective release an older live service cannot read; and it advances the
// watermark to the effective release before the process uses it. Create it
// with NewGuard; it is safe for concurrent use (SIGHUP reloads and the
// heartbeat's auto-pin recomputation both go through it).
type Guard struct {
	db    *db.DB
	table *release.Table
	opts  GuardOptions

	mu sync.Mutex // serialises pin changes
}

// GuardOptions says which process a Guard speaks for.
type GuardOptions struct {
	// Name is the process in messages: "rivet-conductor", "rivet-api".
	Name string
	// Hostname and Binaries are the services rows this process registers;
	// they are not "other" services (all-in-one registers two).
	Hostname string
	Binaries []string
	// Timeout is the heartbeat age beyond which a service is not live
	// ([conductor] heartbeat_timeout); only the skew check at start reads
	// liveness.
	Timeout time.Duration
	// ForgetTimeout is the heartbeat age beyond which a service that is
	// not live stops counting ([DEFAULT] service_forget_timeout; 0 means
	// db.DefaultServiceForgetTimeout). Until then, or until `rivet upgrade
	// forget`, it is "unknown", not gone: the auto pin and the finalized
	// release still count it.
	ForgetTimeout time.Duration
	Logger        *slog.Logger
}

// NewGuard returns a Guard over d for a process running HEAD of table.
func NewGuard(d *db.DB, table *release.Table, o GuardOptions) *Guard {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Timeout <= 0 {
		o.Timeout = db.DefaultServiceTimeout
	}
	if o.ForgetTimeout <= 0 {
		o.ForgetTimeout = db.DefaultServiceForgetTimeout
	}
	return &Guard{db: d, table: table, opts: o}
}

// DB is the database the guard reads and advances the watermark in.
func (g *Guard) DB() *db.DB { return g.db }

// Start runs once the process's services rows are registered (so a
// concurrent advance by another service counts this one): it refuses with
// *release.ServiceTooOldError, *release.TooFarAheadError or
// *release.PinTooNewError, or resolves pn's pin (auto from the live
// services), advances the watermark to the effective release and sets it.
// On a refusal the caller marks its rows offline and exits.
func (g *Guard) Start(ctx context.Context, pn *release.Pinner) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.checkFinalized(ctx); err != nil {
		return err
	}
	known, live, now, err := g.known(ctx)
	if err != nil {
		return err
	}
	if err := g.table.CheckSkew(g.opts.Name, g.others(live, now)); err != nil {
		return err
	}
	_, err = g.use(ctx, pn, pn.Pin(), known, live, now, atStart)
	return err
}

// CheckRunning refuses (*release.ServiceTooOldError) a running process the
// watermark has passed: another service advanced it in a race with this
// one's start. The caller logs it and stops.
func (g *Guard) CheckRunning(ctx context.Context) error { return g.checkFinalized(ctx) }

// Apply switches pn to pin p (a SIGHUP reload). When the effective release
// changes it refuses (*release.PinTooNewError) a release an older live
// service cannot read, and advances the watermark before switching; on any
// error pn is unchanged. It returns the effective release.
func (g *Guard) Apply(ctx context.Context, pn *release.Pinner, p release.Pin) (release.Entry, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	known, live, now, err := g.known(ctx)
	if err != nil {
		return pn.Effective(), err
	}
	e, err := g.use(ctx, pn, p, known, live, now, onReload)
	if err != nil {
		return e, err
	}
	// Record the pin at once rather than at the next heartbeat, so that
	// peers checking the skew rules see it (conductors unpinned, then APIs).
	for _, b := range g.opts.Binaries {
		if err := g.db.SetServicePin(ctx, g.opts.Hostname, b, p.String()); err != nil {
			g.opts.Logger.Warn("recording the reloaded pin failed; the next heartbeat records it", "binary", b, "error", err)
		}
	}
	return e, nil
}

// Follow recomputes an auto pin from the known services (each heartbeat),
// as Apply does for a new pin; an API's effective release, whatever its
// pin, is also brought down to what its live conductors store and back up
// once they store more. Other pins are left alone. A service that stopped
// heartbeating still counts (ForgetTimeout), so missed heartbeats alone, or
// a database outage that stops every heartbeat, never unpin.
func (g *Guard) Follow(ctx context.Context, pn *release.Pinner) (release.Entry, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := pn.Pin()
	if p.Mode != release.PinAuto && !g.serves(db.BinaryAPI) {
		return pn.Effective(), nil
	}
	known, live, now, err := g.known(ctx)
	if err != nil {
		return pn.Effective(), err
	}
	return g.use(ctx, pn, p, known, live, now, onHeartbeat)
}

func (g *Guard) liveness() db.Liveness {
	return db.Liveness{Timeout: g.opts.Timeout, Forget: g.opts.ForgetTimeout}
}

// known reads the services that count (db.Service.Counts: not gone, not
// older than the finalized release) and the live ones (whatever their
// release: the skew check reads them), as classified at the database
// clock now.
func (g *Guard) known(ctx context.Context) (known, live []db.Service, now time.Time, err error) {
	if now, err = g.db.Now(ctx); err != nil {
		return nil, nil, now, err
	}
	fin := 0
	if fr, err := g.db.FinalizedRelease(ctx); err != nil {
		return nil, nil, now, err
	} else if fr != nil {
		fin = fr.ServiceVersion
	}
	all, err := g.db.Services(ctx)
	if err != nil {
		return nil, nil, now, err
	}
	for _, s := range all {
		if s.Counts(now, g.liveness(), fin) {
			known = append(known, s)
		}
		if s.State(now, g.liveness()) == db.ServiceLive {
			live = append(live, s)
		}
	}
	return known, live, now, nil
}

// useMode says why use runs, which decides what it refuses.
type useMode int

const (
	atStart     useMode = iota // Start: every check; a refusal stops the process
	onReload                   // Apply (SIGHUP): a refusal keeps the running pin
	onHeartbeat                // Follow: never refuses the skew rules, obeys them
)

// serves reports whether this process registers as binary.
func (g *Guard) serves(binary string) bool { return slices.Contains(g.opts.Binaries, binary) }

// use resolves p against the known services, enforces the skew rules
// against the live ones (seed 000 step 3: an API never uses a release a
// live conductor cannot store), checks and advances when the effective
// release changes (always at start), then sets pn. The watermark thus
// advances to R only when every known service (this one included) runs R
// or newer: an auto pin is the oldest release among them, and
// CheckEffective refuses any other pin above it.
func (g *Guard) use(ctx context.Context, pn *release.Pinner, p release.Pin, known, live []db.Service, now time.Time, mode useMode) (release.Entry, error) {
	versions := []int{g.table.Head().ServiceVersion}
	for _, s := range known {
		versions = append(versions, s.ServiceVersion)
	}
	cur := pn.Effective()
	e := g.table.Resolve(p, versions)
	others := g.otherRows(live)
	if g.serves(db.BinaryAPI) {
		// A live conductor below the finalized release is an old binary
		// on its way out (it refuses to start, but may register first):
		// the rows are already at the finalized versions, so it does not
		// cap what the API serves. The skew checks still see it.
		if c, at, ok := conductorFloor(g.table, counting(others, known), versions); ok && !at.Covers(e) {
			ahead := &release.AheadOfConductorError{Binary: g.opts.Name, Effective: e, Conductor: peerOf(c), At: at}
			switch {
			case p.Mode == release.PinAuto:
				// auto means "what the fleet can take": follow the conductor.
			case mode != onHeartbeat:
				// A conductor of an older binary gets the refusal that
				// names the pin to set.
				if err := g.table.CheckEffective(g.opts.Name, e, g.others(known, now)); err != nil {
					return cur, err
				}
				return cur, ahead
			case cur.Version != at.Version:
				g.opts.Logger.Error("serving only what a live conductor stores until it is unpinned", "error", ahead.Error())
			}
			e = at
		} else if mode == onHeartbeat && p.Mode != release.PinAuto && e.Version != cur.Version {
			g.opts.Logger.Info("every live conductor stores the pinned release again: serving it", "release", e.Label())
		}
	}
	if g.serves(db.BinaryConductor) && mode != onHeartbeat && (mode == atStart || e.Version != cur.Version) {
		if err := g.checkAPIs(e, others, versions); err != nil {
			return cur, err
		}
	}
	if mode == atStart || e.Version != cur.Version {
		if err := g.table.CheckEffective(g.opts.Name, e, g.others(known, now)); err != nil {
			return cur, err
		}
		fr, advanced, err := g.db.AdvanceFinalizedRelease(ctx, e.Release(), e.ServiceVersion)
		if err != nil {
			return cur, err
		}
		if advanced {
			g.opts.Logger.Info("finalized release advanced: services older than it can no longer start",
				"release", fr.Release, "service_version", fr.ServiceVersion)
		}
	}
	return pn.SetTo(p, e), nil
}

// checkAPIs refuses (*release.BehindAPIError) a conductor release e below
// what a live API (among others, the live services but this process's
// rows) serves: APIs are pinned back before conductors.
func (g *Guard) checkAPIs(e release.Entry, others []db.Service, versions []int) error {
	for _, s := range others {
		if s.Binary != db.BinaryAPI {
			continue
		}
		if at := effectiveOf(g.table, s, others, versions); !e.Covers(at) {
			return &release.BehindAPIError{Binary: g.opts.Name, Effective: e, API: peerOf(s), At: at}
		}
	}
	return nil
}

// EffectiveOf is the release service s uses now, as the services rows of
// live tell; see effectiveOf.
func EffectiveOf(table *release.Table, s db.Service, live []db.Service) release.Entry {
	versions := make([]int, 0, len(live))
	for _, l := range live {
		versions = append(versions, l.ServiceVersion)
	}
	return effectiveOf(table, s, live, versions)
}

// effectiveOf is the one place that reads "a service's effective pin" from
// its services row (the registered pin column and service version, through
// release.Table.PeerEffective; versions are the live services' service
// versions, for an auto pin). An API's is never above what the lowest live
// conductor among live stores: a running API caps itself so (Guard.use).
func effectiveOf(table *release.Table, s db.Service, live []db.Service, versions []int) release.Entry {
	e := table.PeerEffective(peerOf(s), versions)
	if s.Binary == db.BinaryAPI {
		if _, at, ok := conductorFloor(table, live, versions); ok && !at.Covers(e) {
			e = at
		}
	}
	return e
}

// conductorFloor returns the live conductor among live whose effective
// release is the oldest, and that release; ok is false for none.
func conductorFloor(table *release.Table, live []db.Service, versions []int) (c db.Service, at release.Entry, ok bool) {
	var peers []release.Peer
	var ats []release.Entry
	var rows []db.Service
	for _, s := range live {
		if s.Binary != db.BinaryConductor {
			continue
		}
		p := peerOf(s)
		peers, ats, rows = append(peers, p), append(ats, table.PeerEffective(p, versions)), append(rows, s)
	}
	p, at, ok := table.Floor(peers, ats)
	if !ok {
		return db.Service{}, release.Entry{}, false
	}
	return rows[slices.IndexFunc(peers, func(x release.Peer) bool { return x == p })], at, true
}

// counting returns the rows of live that also count (are in known: not
// below the finalized release).
func counting(live, known []db.Service) []db.Service {
	var out []db.Service
	for _, s := range live {
		if slices.ContainsFunc(known, func(k db.Service) bool { return k.Hostname == s.Hostname && k.Binary == s.Binary }) {
			out = append(out, s)
		}
	}
	return out
}

// peerOf is s as the release package's checks see it.
func peerOf(s db.Service) release.Peer {
	p := release.Peer{Name: s.Name(), Release: s.Release, ServiceVersion: s.ServiceVersion}
	if s.Pin != nil {
		p.Pin = *s.Pin
	}
	return p
}

// otherRows are the services of svcs that are not this process's rows.
func (g *Guard) otherRows(svcs []db.Service) []db.Service {
	var out []db.Service
	for _, s := range svcs {
		if s.Hostname == g.opts.Hostname && slices.Contains(g.opts.Binaries, s.Binary) {
			continue
		}
		out = append(out, s)
	}
	return out
}

func (g *Guard) checkFinalized(ctx context.Context) error {
	fr, err := g.db.FinalizedRelease(ctx)
	if err != nil || fr == nil {
		return err
	}
	return g.table.CheckFinalized(g.opts.Name, release.Finalized{Release: fr.Release, ServiceVersion: fr.ServiceVersion})
}

// others are the services of svcs that are not this process's rows, with
// a note on those not live (classified at now).
func (g *Guard) others(svcs []db.Service, now time.Time) []release.Peer {
	var out []release.Peer
	for _, s := range g.otherRows(svcs) {
		p := peerOf(s)
		p.Note = NotLiveNote(s, s.State(now, g.liveness()), now)
		out = append(out, p)
	}
	return out
}

// NotLiveNote says why a service that is not live still counts, and how an
// operator lets it go; "" for a live one.
func NotLiveNote(s db.Service, st db.ServiceState, now time.Time) string {
	var what string
	switch st {
	case db.ServiceUnknown:
		what = "has not heartbeated for " + now.Sub(s.UpdatedAt).Round(time.Second).String() + " but may come back"
	case db.ServiceStopped:
		what = "stopped " + now.Sub(s.UpdatedAt).Round(time.Second).String() + " ago and may start again"
	default:
		return ""
	}
	return fmt.Sprintf("%s %s; if it is gone for good, run `rivet upgrade forget %s %s`", s.Name(), what, s.Binary, s.Hostname)
}
