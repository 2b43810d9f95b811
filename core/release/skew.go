package release

import (
	"fmt"
	"slices"
	"strings"
)

// The skew rule between APIs and conductors (seed 000, "Rolling upgrade
// process", step 3): conductors are unpinned before APIs, "to ensure that
// when new functionality is exposed on the unpinned API service (via API
// micro version), it is available on the backend". A conductor writes
// objects at its effective release's versions, so an API serving above it
// would accept a request whose data the conductor drops on save (an API at
// 1.31 setting inspect_interface, stored by a conductor pinned to 0.1 at
// Node 1.0, answered 200 and lost). The functions below make that rule
// executable: an API never uses a release a live conductor cannot store.

// Covers reports whether a service using e can serve and store everything
// a service using o sends or accepts: e's API microversion, RPC version and
// the newest version of every object kind o writes are all at least o's.
func (e Entry) Covers(o Entry) bool {
	if e.API.Less(o.API) || e.RPC.Less(o.RPC) {
		return false
	}
	for kind := range o.Objects {
		ov, _ := o.ObjectVersion(kind)
		ev, ok := e.ObjectVersion(kind)
		if !ok || ev.Less(ov) {
			return false
		}
	}
	return true
}

// index is e's position in All() (oldest first), -1 when absent.
func (t *Table) index(e Entry) int {
	return slices.IndexFunc(t.All(), func(x Entry) bool { return x.Version == e.Version })
}

// Older returns whichever of a and b comes first in the table.
func (t *Table) Older(a, b Entry) Entry {
	if t.index(b) < t.index(a) {
		return b
	}
	return a
}

// PeerEffective is what a live service uses now, as far as its services
// row tells (the one place that reads "a service's effective pin"): the
// release its configured pin names, never newer than the release its
// service version maps to; the oldest release among liveServiceVersions
// for an "auto" pin; its own release when unpinned or pinned to a release
// this table does not know (a newer binary's). A service older than every
// release of the table maps to the oldest.
func (t *Table) PeerEffective(p Peer, liveServiceVersions []int) Entry {
	own, ok := t.ForServiceVersion(p.ServiceVersion)
	if !ok {
		own = t.All()[0]
	}
	pin, err := t.ParsePin(p.Pin)
	if err != nil || pin.Mode == PinLatest {
		return own
	}
	if pin.Mode == PinAuto {
		return t.Older(t.Resolve(pin, append([]int{p.ServiceVersion}, liveServiceVersions...)), own)
	}
	return t.Older(pin.Release, own)
}

// describePin renders a peer's registered pin for messages.
func describePin(pin string) string {
	if strings.TrimSpace(pin) == "" {
		return "unpinned"
	}
	return "pin_release_version = " + pin
}

// AheadOfConductorError refuses an API's effective release above what a
// live conductor stores: conductors are unpinned first, then APIs.
type AheadOfConductorError struct {
	// Binary is the refused process: "rivet-api".
	Binary    string
	Effective Entry
	// Conductor is the live conductor and At the release it stores.
	Conductor Peer
	At        Entry
}

func (e *AheadOfConductorError) Error() string {
	return fmt.Sprintf("this %s would serve release %s (API %s) but %s (%s) stores objects at release %s (API %s): "+
		"a request it cannot store would be accepted and its data dropped. Conductors are unpinned first, then APIs "+
		"(docs/admin/rolling-upgrade.md, step 3): clear pin_release_version on %s and send it SIGHUP, then unpin this API; "+
		"until then keep [DEFAULT] pin_release_version = %s (or auto)",
		e.Binary, e.Effective.display(), e.Effective.API, e.Conductor.Name, describePin(e.Conductor.Pin), e.At.display(), e.At.API,
		e.Conductor.Name, e.At.pinValue())
}

// BehindAPIError refuses a conductor's effective release below what a
// live API serves: APIs are pinned back first, then conductors.
type BehindAPIError struct {
	// Binary is the refused process: "rivet-conductor".
	Binary    string
	Effective Entry
	// API is the live API and At the release it serves.
	API Peer
	At  Entry
}

func (e *BehindAPIError) Error() string {
	return fmt.Sprintf("this %s would store objects at release %s (API %s) but %s (%s) serves release %s (API %s): "+
		"it would accept requests whose data this conductor drops. Conductors are unpinned before APIs and pinned after them: "+
		"set [DEFAULT] pin_release_version = %s on %s and send it SIGHUP first",
		e.Binary, e.Effective.display(), e.Effective.API, e.API.Name, describePin(e.API.Pin), e.At.display(), e.At.API,
		e.Effective.pinValue(), e.API.Name)
}

// display names e in operator messages: a cut release's label, or the
// release string of this binary for HEAD.
func (e Entry) display() string {
	if e.IsHead() {
		return Current
	}
	return e.Label()
}

// pinValue is the pin_release_version that selects e ("" for HEAD).
func (e Entry) pinValue() string {
	if e.IsHead() {
		return `""`
	}
	return e.Version
}

// Floor returns, among peers with the release each uses (effective[i] is
// peers[i]'s), the one whose release covers the least: the oldest. ok is
// false for none.
func (t *Table) Floor(peers []Peer, effective []Entry) (p Peer, at Entry, ok bool) {
	for i := range peers {
		if !ok || t.index(effective[i]) < t.index(at) {
			p, at, ok = peers[i], effective[i], true
		}
	}
	return p, at, ok
}
