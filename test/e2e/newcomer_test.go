package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/test/testenv"
)

// readmeSession returns the commands and outputs of the README block
// between <!-- newcomer-path:start --> and <!-- newcomer-path:end -->:
// lines starting "$ " are commands, the lines after them their stdout.
func readmeSession(t *testing.T) (cmds [][]string, outputs []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start, end := strings.Index(s, "<!-- newcomer-path:start"), strings.Index(s, "<!-- newcomer-path:end")
	if start < 0 || end < start {
		t.Fatal("README.md has no newcomer-path block")
	}
	for _, line := range strings.Split(s[start:end], "\n") {
		switch {
		case strings.HasPrefix(line, "$ "):
			fields := strings.Fields(strings.TrimPrefix(line, "$ "))
			if len(fields) < 3 || strings.Join(fields[:3], " ") != "go run ./cmd/rivet" {
				t.Fatalf("README command %q does not start with go run ./cmd/rivet", line)
			}
			cmds = append(cmds, fields[3:])
			outputs = append(outputs, "")
		case strings.HasPrefix(line, "```") || strings.HasPrefix(line, "<!--") || len(cmds) == 0:
		default:
			outputs[len(outputs)-1] += line + "\n"
		}
	}
	return cmds, outputs
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// normalize hides what legitimately differs between runs: UUIDs.
func normalize(s string) string { return strings.TrimSpace(uuidRE.ReplaceAllString(s, "<uuid>")) }

// TestNewcomerPath is the README's promise, scripted: `rivet dev` in one
// terminal, then the commands the README shows, with the output it shows.
func TestNewcomerPath(t *testing.T) {
	d := startDev(t, 4)
	cmds, outputs := readmeSession(t)
	if len(cmds) < 3 {
		t.Fatalf("README shows %d commands, want the newcomer's three", len(cmds))
	}
	for i, args := range cmds {
		got := d.rivet(t, args...)
		if normalize(got) != normalize(outputs[i]) {
			t.Errorf("rivet %s printed:\n%s\nthe README shows:\n%s", strings.Join(args, " "), got, outputs[i])
		}
	}
}

// TestDevRestartReusesState stops rivet dev and starts it again on the same
// state directory: nodes and their states survive.
func TestDevRestartReusesState(t *testing.T) {
	state := t.TempDir()
	d := startDevIn(t, state, 2)
	d.rivet(t, "node", "deploy", "sim-1", "--wait")
	d.stop(t)
	again := startDevIn(t, state, 2)
	out := again.rivet(t, "node", "list", "-f", "value", "--fields", "name,provision_state")
	if normalize(out) != "sim-0 available\nsim-1 active" {
		t.Fatalf("after a restart: %q", out)
	}
}
