package objects

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/release"
)

// TestReleaseTableMatchesCode enforces ARCHITECTURE §3.8 for objects: HEAD
// lists exactly the registered kinds, each at its latest version, and every
// version any release may have written can be converted by this code.
func TestReleaseTableMatchesCode(t *testing.T) {
	r := NewRegistry()
	if err := Install(r); err != nil {
		t.Fatal(err)
	}
	table := release.Default()
	head := table.Head()
	if diff := cmp.Diff(r.Kinds(), head.ObjectKinds()); diff != "" {
		t.Errorf("HEAD's object kinds differ from the registered kinds; edit core/release/releases.go (-registered +HEAD):\n%s", diff)
	}
	for _, kind := range r.Kinds() {
		latest, _ := r.Latest(kind)
		if got, ok := head.ObjectVersion(kind); !ok || got != latest {
			t.Errorf("HEAD writes %s %v, the code's latest is %s: list %s first in HEAD's Objects in core/release/releases.go", kind, got, latest, latest)
		}
		if got, err := r.Target(kind, head); err != nil || got != latest {
			t.Errorf("Target(%s, HEAD) = %v, %v; want %s", kind, got, err, latest)
		}
	}
	for kind, versions := range table.SupportedObjectVersions() {
		for _, ver := range versions {
			if err := r.CheckVersion(kind, ver); err != nil {
				t.Errorf("a supported release writes %s %s but this code cannot convert it: %v", kind, ver, err)
			}
		}
	}
	for _, e := range table.All() {
		for _, kind := range e.ObjectKinds() {
			if _, err := r.Target(kind, e); err != nil {
				t.Errorf("pinning to %s: %v", e.Label(), err)
			}
		}
	}
}
