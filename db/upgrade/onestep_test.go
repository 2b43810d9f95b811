package upgrade

import (
	"testing"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// oneStep is Rivet's release table with 0.1 as the only cut release, so
// that 0.1 → HEAD is one upgrade step whatever HEAD's number: the walks
// these tests drive cross Node's 1.0 → 1.1 step on the real tables.
func oneStep(t testing.TB) *release.Table {
	t.Helper()
	tb := dbtest.Releases(t)
	r01, _ := tb.Lookup("0.1")
	one, err := release.NewTable(tb.Head(), r01)
	if err != nil {
		t.Fatal(err)
	}
	return one
}
