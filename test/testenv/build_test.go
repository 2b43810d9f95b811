package testenv_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/test/testenv"
)

// A release's binary built from history reports that release, not HEAD's.
func TestBuildReleaseBuildsTheRecordedCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds release 0.1 from git history")
	}
	bin := testenv.BuildRelease(t, "0.1", "./cmd/rivet")
	out, err := exec.Command(filepath.Join(bin, "rivet"), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("rivet version: %v\n%s", err, out)
	}
	e, _ := release.Default().Lookup("0.1")
	want := e.Point
	if want == "" {
		want = "0.1.0"
	}
	if !strings.Contains(string(out), want) || strings.Contains(string(out), "0.2.0.dev") {
		t.Fatalf("rivet version of the 0.1 build says:\n%s", out)
	}
}
