package upgrade

import (
	"testing"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// releases01 is the release table these tests walk an upgrade in: release
// 0.1 and HEAD, with 0.1 the release just before HEAD. The real table has
// 0.2 between them once HEAD is a release of its own (service version 3,
// release 0.3), and the skew rules then refuse 0.1 beside HEAD; the rules
// under test are those between one release and the next.
func releases01(t *testing.T) *release.Table {
	t.Helper()
	r01, ok := dbtest.Releases(t).Lookup("0.1")
	if !ok {
		t.Fatal("no release 0.1")
	}
	tb, err := release.NewTable(release.Default().Head(), r01)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// headSV is HEAD's service version.
func headSV() int { return release.Default().Head().ServiceVersion }
