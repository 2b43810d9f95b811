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

// ParsePin parses a pin_release_version value. Unknown values are an error
// that lists every valid value, so a typo stops the service at start.
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
	return Pin{}, fmt.Errorf("unknown release %q: valid values are %s", value, strings.Join(t.PinValues(), ", "))
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

// Pin returns the configured pin.
func (pn *Pinner) Pin() Pin { return pn.state.Load().pin }

// Effective returns the release whose API, RPC and object versions apply now.
func (pn *Pinner) Effective() Entry { return pn.state.Load().effective }

// Table returns the release table the pinner resolves against.
func (pn *Pinner) Table() *Table { return pn.table }
