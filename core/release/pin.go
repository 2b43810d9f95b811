package release

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// PinMode says how the effective release is chosen.
type PinMode int

const (
	// PinLatest uses the code's own versions (HEAD).
	PinLatest PinMode = iota
	// PinRelease uses one named or semver release.
	PinRelease
	// PinAuto uses the oldest release among the services that count:
	// registered and not forgotten, heartbeating or not (db.Service.Counts).
	PinAuto
)

// Pin is a parsed [DEFAULT] pin_release_version.
type Pin struct {
	Mode PinMode
	// Release is the pinned entry when Mode is PinRelease.
	Release Entry
}

// String renders the pin as the config value that produces it.
func (p Pin) String() string {
	switch p.Mode {
	case PinRelease:
		return p.Release.Version
	case PinAuto:
		return "auto"
	}
	return ""
}

// ParsePin parses a pin_release_version value: "" (latest), "auto", a cut
// release's key ("0.1") or name ("anvil"), or any release string of that
// release as `rivet version` prints it ("0.1.0", "0.1.1"; a leading "v", as
// in a git tag, is accepted too). Point releases of a series speak exactly
// what its cut does, so "0.1.1" pins release 0.1. Unknown values are an
// error that lists every valid value, so a typo stops the service at start.
func (t *Table) ParsePin(value string) (Pin, error) {
	v := strings.TrimSpace(value)
	switch {
	case v == "":
		return Pin{Mode: PinLatest}, nil
	case strings.EqualFold(v, "auto"):
		return Pin{Mode: PinAuto}, nil
	}
	for _, e := range t.releases {
		if strings.EqualFold(e.Version, v) || strings.EqualFold(e.Name, v) {
			return Pin{Mode: PinRelease, Release: e}, nil
		}
	}
	key, point, dev := releaseKey(v)
	if key != "" && !dev {
		for _, e := range t.releases {
			if e.Version == key {
				return Pin{Mode: PinRelease, Release: e}, nil
			}
		}
	}
	hint := ""
	if key != "" {
		switch {
		case dev:
			hint = fmt.Sprintf(" (%s is a development build, not a cut release: pin the release the fleet upgrades from)", v)
		case point:
			hint = fmt.Sprintf(" (release %s was never cut)", key)
		}
	}
	return Pin{}, fmt.Errorf("unknown release %q%s: valid values are %s, or a point release of one (e.g. %s)",
		value, hint, strings.Join(t.PinValues(), ", "), t.pointExample())
}

// releaseKey reads a release string as `rivet version` prints it:
// [v]MAJOR.MINOR[.PATCH[.dev]]. key is "MAJOR.MINOR" ("" when s is not of
// that form), point reports a PATCH, dev a ".dev" suffix.
func releaseKey(s string) (key string, point, dev bool) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	parts := strings.Split(s, ".")
	if len(parts) == 4 && strings.EqualFold(parts[3], "dev") {
		parts, dev = parts[:3], true
	}
	if len(parts) != 2 && len(parts) != 3 {
		return "", false, false
	}
	for _, c := range parts {
		if !decimal(c) {
			return "", false, false
		}
	}
	return parts[0] + "." + parts[1], len(parts) == 3, dev
}

// decimal reports whether s is a non-negative integer without sign or
// leading zero, as a semver component.
func decimal(s string) bool {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// pointExample is a point-release spelling of the newest cut release, for
// messages: "0.1.1".
func (t *Table) pointExample() string {
	if len(t.releases) == 0 {
		return "0.1.0"
	}
	e := t.releases[len(t.releases)-1]
	if e.Point != "" {
		return e.Point
	}
	return e.Version + ".0"
}

// Resolve returns the entry whose versions a service must use under p.
// liveServiceVersions are the service versions of the services that count
// in the cluster (this one included; the guard passes every registered
// service not forgotten, live or not, so that missed heartbeats never
// unpin); they matter only for PinAuto, where the effective release is what
// the oldest of them speaks. With none known, auto means latest.
func (t *Table) Resolve(p Pin, liveServiceVersions []int) Entry {
	switch p.Mode {
	case PinRelease:
		return p.Release
	case PinAuto:
		if len(liveServiceVersions) == 0 {
			return t.head
		}
		oldest := liveServiceVersions[0]
		for _, sv := range liveServiceVersions[1:] {
			oldest = min(oldest, sv)
		}
		if e, ok := t.ForServiceVersion(oldest); ok {
			return e
		}
		// Older than anything in the table: the oldest release is the best
		// this code can still speak; starting at all is refused elsewhere.
		if len(t.releases) > 0 {
			return t.releases[0]
		}
	}
	return t.head
}

// Pinner holds a service's current pin and effective release. It is safe for
// concurrent use; SIGHUP reloads and auto-pin recomputation call Set while
// request handlers call Effective.
type Pinner struct {
	table *Table
	state atomic.Pointer[pinState]
}

type pinState struct {
	pin       Pin
	effective Entry
}

// NewPinner returns a Pinner at pin p, resolved with no live services known.
func NewPinner(t *Table, p Pin) *Pinner {
	pn := &Pinner{table: t}
	pn.Set(p, nil)
	return pn
}

// Set changes the pin and recomputes the effective release. It returns the
// new effective entry.
func (pn *Pinner) Set(p Pin, liveServiceVersions []int) Entry {
	e := pn.table.Resolve(p, liveServiceVersions)
	pn.state.Store(&pinState{pin: p, effective: e})
	return e
}

// SetTo changes the pin to p with effective release e, resolved by the
// caller (an API capped to what its conductors store). It returns e.
func (pn *Pinner) SetTo(p Pin, e Entry) Entry {
	pn.state.Store(&pinState{pin: p, effective: e})
	return e
}

// Pin returns the configured pin.
func (pn *Pinner) Pin() Pin { return pn.state.Load().pin }

// Effective returns the release whose API, RPC and object versions apply now.
func (pn *Pinner) Effective() Entry { return pn.state.Load().effective }

// Table returns the release table the pinner resolves against.
func (pn *Pinner) Table() *Table { return pn.table }
