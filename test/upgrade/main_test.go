package upgrade

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// runCommand is how the rolling-upgrade runs are started (README).
const runCommand = "go test -count=1 -timeout 30m ./test/upgrade/ -args -upgrade"

var upgradeFlag = flag.Bool("upgrade", false, "run the rolling-upgrade suites (several minutes; "+runCommand+")")

// workDir holds this test binary's builds of the working tree.
var workDir string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "rivet-upgrade-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	workDir = dir
	code := m.Run()
	printSummaries(os.Stdout)
	os.RemoveAll(dir)
	os.Exit(code)
}

// requireUpgrade skips t unless -upgrade was given: the runs take minutes
// and have their own CI command.
func requireUpgrade(t *testing.T) {
	t.Helper()
	if !*upgradeFlag {
		t.Skip("the rolling-upgrade runs take several minutes and run on their own: " + runCommand)
	}
}
