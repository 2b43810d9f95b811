package release

import (
	"slices"

	"github.com/rivetmetal/rivet/core/version"
)

// HeadKey is the key of the entry that describes the code as it is.
const HeadKey = "HEAD"

// Entry describes what one release speaks.
type Entry struct {
	// Version is the semver key ("0.1"), or HeadKey.
	Version string
	// Name is the release's name, usable wherever the key is; empty for HEAD.
	Name string
	// API is the highest REST API microversion the release serves.
	API version.Version
	// RPC is the conductor RPC API version of the release.
	RPC version.Version
	// Objects maps an object kind to every version the release may write,
	// newest first. DB compatibility checks need the whole list, pinning uses
	// the newest.
	Objects map[string][]version.Version
	// ServiceVersion is the monotonic integer a service of this release
	// registers; it is bumped with any RPC change or online migration.
	ServiceVersion int
	// Commit is the git commit of the release's newest point release (the
	// cut itself until a bug-fix release follows; empty for HEAD). It is
	// recorded in the commit after the cut and moved by each point release,
	// so upgrade tests build from history (test/testenv.BuildRelease) the
	// code an operator upgrades from: the series' latest fixes.
	Commit string
	// Point is that commit's release string (release.Current there, e.g.
	// "0.1.1"); empty means the cut, MAJOR.MINOR.0.
	Point string
}

// IsHead reports whether e describes the code as it is rather than a cut release.
func (e Entry) IsHead() bool { return e.Version == HeadKey }

// Label is how the entry is named in messages: `0.1 ("anvil")` or `HEAD`.
func (e Entry) Label() string {
	if e.Name == "" {
		return e.Version
	}
	return e.Version + ` ("` + e.Name + `")`
}

// ObjectVersion returns the newest version of kind the release writes. ok is
// false when the release does not know the kind (a kind newer than the
// release), in which case callers use the latest version, as Ironic does.
func (e Entry) ObjectVersion(kind string) (v version.Version, ok bool) {
	vs := e.Objects[kind]
	if len(vs) == 0 {
		return version.Version{}, false
	}
	return version.Max(vs...), true
}

// ObjectKinds returns the kinds the release lists, sorted.
func (e Entry) ObjectKinds() []string {
	kinds := make([]string, 0, len(e.Objects))
	for k := range e.Objects {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}
