package dbtest

import (
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
)

// Registry returns the real object kinds, registered.
func Registry(t testing.TB) *objects.Registry {
	t.Helper()
	r := objects.NewRegistry()
	if err := objects.Install(r); err != nil {
		t.Fatal(err)
	}
	return r
}

// Releases is Rivet's release table for tests that pin to a cut release,
// e.g. 0.1 to cross Node's 1.0 → 1.1 step on the real nodes table. It
// fails the test unless the table lists 0.1.
func Releases(t testing.TB) *release.Table {
	t.Helper()
	tb := release.Default()
	if _, ok := tb.Lookup("0.1"); !ok {
		t.Fatal("the release table lists no release 0.1")
	}
	return tb
}
