package release

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/version"
)

// Table is an ordered, validated release table. It is immutable after
// NewTable.
type Table struct {
	releases []Entry // oldest first, HEAD excluded
	head     Entry
}

// NewTable validates head and releases (oldest first) and builds a table.
func NewTable(head Entry, releases ...Entry) (*Table, error) {
	if !head.IsHead() {
		return nil, fmt.Errorf("release table: head entry has key %q, want %q", head.Version, HeadKey)
	}
	t := &Table{releases: slices.Clone(releases), head: head}
	if err := t.validate(); err != nil {
		return nil, fmt.Errorf("release table: %w", err)
	}
	return t, nil
}

func (t *Table) validate() error {
	var errs []error
	seen := map[string]string{strings.ToLower(HeadKey): HeadKey, "auto": "auto"}
	claim := func(key, owner string) {
		k := strings.ToLower(key)
		if prev, dup := seen[k]; dup {
			errs = append(errs, fmt.Errorf("%q of %s is already used by %s", key, owner, prev))
			return
		}
		seen[k] = owner
	}
	for _, e := range t.releases {
		if _, err := version.Parse(e.Version); err != nil {
			errs = append(errs, fmt.Errorf("release key %q is not MAJOR.MINOR: %w", e.Version, err))
		}
		claim(e.Version, e.Version)
		if e.Name == "" {
			errs = append(errs, fmt.Errorf("release %s has no name", e.Version))
		} else {
			claim(e.Name, e.Version)
		}
	}
	all := t.All()
	for i, e := range all {
		for kind, vs := range e.Objects {
			if len(vs) == 0 {
				errs = append(errs, fmt.Errorf("%s lists no version for %s", e.Label(), kind))
			}
			for j := 1; j < len(vs); j++ {
				if !vs[j].Less(vs[j-1]) {
					errs = append(errs, fmt.Errorf("%s: %s versions %v are not newest first without repeats", e.Label(), kind, vs))
					break
				}
			}
		}
		if i == 0 {
			continue
		}
		prev := all[i-1]
		if e.API.Less(prev.API) {
			errs = append(errs, fmt.Errorf("%s API %s is older than %s's %s", e.Label(), e.API, prev.Label(), prev.API))
		}
		if e.RPC.Less(prev.RPC) {
			errs = append(errs, fmt.Errorf("%s RPC %s is older than %s's %s", e.Label(), e.RPC, prev.Label(), prev.RPC))
		}
		if e.ServiceVersion < prev.ServiceVersion {
			errs = append(errs, fmt.Errorf("%s service version %d is below %s's %d", e.Label(), e.ServiceVersion, prev.Label(), prev.ServiceVersion))
		}
		for kind := range prev.Objects {
			if _, ok := e.Objects[kind]; !ok {
				errs = append(errs, fmt.Errorf("%s drops object %s that %s lists", e.Label(), kind, prev.Label()))
			}
		}
	}
	if err := checkContiguous(all); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkContiguous enforces that, across the whole table, each kind's versions
// form one run M.k … M.n with no gap (Ironic's test_release_mappings rule).
func checkContiguous(all []Entry) error {
	union := map[string]map[version.Version]bool{}
	for _, e := range all {
		for kind, vs := range e.Objects {
			if union[kind] == nil {
				union[kind] = map[version.Version]bool{}
			}
			for _, v := range vs {
				union[kind][v] = true
			}
		}
	}
	var errs []error
	for kind, set := range union {
		vs := make([]version.Version, 0, len(set))
		for v := range set {
			vs = append(vs, v)
		}
		slices.SortFunc(vs, version.Version.Compare)
		for i := 1; i < len(vs); i++ {
			a, b := vs[i-1], vs[i]
			if a.Major != b.Major || b.Minor != a.Minor+1 {
				errs = append(errs, fmt.Errorf("object %s versions are not contiguous: %s then %s", kind, a, b))
			}
		}
	}
	return errors.Join(errs...)
}

// Head returns the entry that describes the code as it is.
func (t *Table) Head() Entry { return t.head }

// Releases returns the cut releases, oldest first (HEAD excluded).
func (t *Table) Releases() []Entry { return slices.Clone(t.releases) }

// All returns the cut releases oldest first, then HEAD.
func (t *Table) All() []Entry { return append(slices.Clone(t.releases), t.head) }

// Lookup finds an entry by semver key, name (case-insensitive) or HeadKey.
func (t *Table) Lookup(key string) (Entry, bool) {
	for _, e := range t.All() {
		if strings.EqualFold(e.Version, key) || (e.Name != "" && strings.EqualFold(e.Name, key)) {
			return e, true
		}
	}
	return Entry{}, false
}

// ForServiceVersion returns the newest entry whose service version is at most
// sv: what a service reporting sv can be relied upon to speak.
func (t *Table) ForServiceVersion(sv int) (Entry, bool) {
	all := t.All()
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].ServiceVersion <= sv {
			return all[i], true
		}
	}
	return Entry{}, false
}

// SupportedObjectVersions returns, per kind, every object version any entry
// of the table (HEAD included) may have written, sorted oldest first. A DB row
// whose version is outside this set cannot be read by this code.
func (t *Table) SupportedObjectVersions() map[string][]version.Version {
	out := map[string][]version.Version{}
	for _, e := range t.All() {
		for kind, vs := range e.Objects {
			for _, v := range vs {
				if !slices.Contains(out[kind], v) {
					out[kind] = append(out[kind], v)
				}
			}
		}
	}
	for kind := range out {
		slices.SortFunc(out[kind], version.Version.Compare)
	}
	return out
}

// PinValues lists what [DEFAULT] pin_release_version accepts, for messages
// and the config sample: "" (latest), "auto", then each release's key and name.
func (t *Table) PinValues() []string {
	vals := []string{`"" (latest)`, "auto"}
	for _, e := range t.releases {
		vals = append(vals, e.Version, e.Name)
	}
	return vals
}
