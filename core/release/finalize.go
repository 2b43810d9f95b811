package release

import (
	"fmt"
	"slices"
)

// Release is the release string recorded for e in the finalized-release
// watermark: a cut release's semver key, or Current for HEAD.
func (e Entry) Release() string {
	if e.IsHead() {
		return Current
	}
	return e.Version
}

// Finalized is the cluster's finalized-release watermark (ARCHITECTURE §4):
// objects may be written at this release's versions, so services older than
// it cannot read the data. The zero value means none yet.
type Finalized struct {
	Release        string
	ServiceVersion int
}

// Peer is another live service, as the start checks see it.
type Peer struct {
	// Name identifies it in messages: "rivet-conductor on host-1".
	Name           string
	Release        string
	ServiceVersion int
	// Pin is its registered pin_release_version ("" unpinned).
	Pin string
	// Note, when set, says why a peer that is not live still counts and
	// how an operator lets it go; refusals naming the peer append it.
	Note string
}

// Oldest returns the peer with the lowest service version; ok is false for
// none.
func Oldest(peers []Peer) (p Peer, ok bool) {
	if len(peers) == 0 {
		return Peer{}, false
	}
	return slices.MinFunc(peers, func(a, b Peer) int { return a.ServiceVersion - b.ServiceVersion }), true
}

// ServiceTooOldError refuses a service whose code is older than the
// finalized release (Nova's ServiceTooOld).
type ServiceTooOldError struct {
	// Binary is the refused service: "rivet-conductor".
	Binary         string
	Release        string
	ServiceVersion int
	Finalized      Finalized
}

func (e *ServiceTooOldError) Error() string {
	return fmt.Sprintf("%s runs release %s (service version %d) but the cluster was finalized at release %s (service version %d); "+
		"services older than the finalized release cannot read its data: run %s or newer",
		e.Binary, e.Release, e.ServiceVersion, e.Finalized.Release, e.Finalized.ServiceVersion, e.Finalized.Release)
}

// TooFarAheadError refuses a service more than one release newer than the
// oldest live service, or newer than every release a live service can be
// mapped to.
type TooFarAheadError struct {
	Binary         string
	Release        string
	ServiceVersion int
	// Oldest is the oldest live service; Speaks the entry its service
	// version maps to (ok false: older than every release in the table).
	Oldest   Peer
	Speaks   Entry
	SpeaksOK bool
	// Next is the release Oldest must be upgraded to first.
	Next Entry
}

func (e *TooFarAheadError) Error() string {
	if !e.SpeaksOK {
		return fmt.Sprintf("%s runs release %s (service version %d), older than any release this %s (release %s, service version %d) supports; "+
			"upgrade one release at a time: upgrade %s to %s first",
			e.Oldest.Name, e.Oldest.Release, e.Oldest.ServiceVersion, e.Binary, e.Release, e.ServiceVersion, e.Oldest.Name, e.Next.Release())
	}
	return fmt.Sprintf("%s runs release %s (service version %d), more than one release older than this %s (release %s, service version %d); "+
		"upgrade one release at a time: upgrade %s to %s first",
		e.Oldest.Name, e.Oldest.Release, e.Oldest.ServiceVersion, e.Binary, e.Release, e.ServiceVersion, e.Oldest.Name, e.Next.Release())
}

// PinTooNewError refuses an effective release that an older live service
// could not read what it writes: the new binary must stay pinned.
type PinTooNewError struct {
	Binary    string
	Effective Entry
	Oldest    Peer
	// OldestRelease is the cut release Oldest speaks: the pin to set.
	OldestRelease Entry
}

func (e *PinTooNewError) Error() string {
	note := ""
	if e.Oldest.Note != "" {
		note = " (" + e.Oldest.Note + ")"
	}
	return fmt.Sprintf("this %s would use release %s (service version %d) but %s runs release %s (service version %d), "+
		"which cannot read what %s writes: set [DEFAULT] pin_release_version = %s (or auto) until every service runs the new release",
		e.Binary, e.Effective.Release(), e.Effective.ServiceVersion, e.Oldest.Name, e.Oldest.Release, e.Oldest.ServiceVersion,
		e.Effective.Release(), e.OldestRelease.Version) + note
}

// CheckFinalized refuses (*ServiceTooOldError) to run this code, HEAD of t,
// as binary when the cluster was finalized at a newer service version.
func (t *Table) CheckFinalized(binary string, fin Finalized) error {
	if fin.ServiceVersion <= t.head.ServiceVersion {
		return nil
	}
	return &ServiceTooOldError{Binary: binary, Release: Current, ServiceVersion: t.head.ServiceVersion, Finalized: fin}
}

// StepsBehind says how many releases HEAD is ahead of the entry a service
// reporting sv speaks (ForServiceVersion): the number of distinct service
// versions the table lists above that entry's. Releases that share a
// service version are one step: nothing a service version tracks changed
// between them, and a build between releases counts as the next release.
// ok is false when sv is older than every entry.
func (t *Table) StepsBehind(sv int) (steps int, speaks Entry, ok bool) {
	speaks, ok = t.ForServiceVersion(sv)
	if !ok {
		return 0, Entry{}, false
	}
	seen := map[int]bool{}
	for _, e := range t.All() {
		if e.ServiceVersion > speaks.ServiceVersion && !seen[e.ServiceVersion] {
			seen[e.ServiceVersion] = true
			steps++
		}
	}
	return steps, speaks, true
}

// nextAfter is the oldest entry whose service version is above sv: the
// release a service at sv upgrades to next.
func (t *Table) nextAfter(sv int) Entry {
	for _, e := range t.All() {
		if e.ServiceVersion > sv {
			return e
		}
	}
	return t.head
}

// CheckSkew refuses (*TooFarAheadError) to run this code as binary beside
// live services (this one excluded) of which the oldest speaks a release
// more than one step behind HEAD, or none of t's releases at all.
func (t *Table) CheckSkew(binary string, others []Peer) error {
	oldest, ok := Oldest(others)
	if !ok {
		return nil
	}
	steps, speaks, known := t.StepsBehind(oldest.ServiceVersion)
	if known && steps <= 1 {
		return nil
	}
	return &TooFarAheadError{Binary: binary, Release: Current, ServiceVersion: t.head.ServiceVersion,
		Oldest: oldest, Speaks: speaks, SpeaksOK: known, Next: t.nextAfter(oldest.ServiceVersion)}
}

// CheckEffective refuses (*PinTooNewError) to use effective beside other
// services (this one excluded) of which the oldest has a lower service
// version: it could not read objects written at effective's versions. The
// guard passes every service that counts, live or not (a quiet one may come
// back), so a refusal may name one that is not live: its Peer.Note says so.
func (t *Table) CheckEffective(binary string, effective Entry, others []Peer) error {
	oldest, ok := Oldest(others)
	if !ok || effective.ServiceVersion <= oldest.ServiceVersion {
		return nil
	}
	// oldest speaks a cut release: HEAD's service version is at least
	// effective's, above oldest's. Older than the table: pin the oldest.
	speaks, known := t.ForServiceVersion(oldest.ServiceVersion)
	if !known && len(t.releases) > 0 {
		speaks = t.releases[0]
	}
	return &PinTooNewError{Binary: binary, Effective: effective, Oldest: oldest, OldestRelease: speaks}
}
