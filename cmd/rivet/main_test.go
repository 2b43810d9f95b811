package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
)

// runCLI runs the CLI in-process and returns exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"rivet"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestVersion(t *testing.T) {
	code, out, errOut := runCLI(t, "version")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	head := release.Default().Head()
	node, _ := head.ObjectVersion("Node")
	for _, want := range []string{release.Current, fmt.Sprintf("service version: %d", head.ServiceVersion), "1.1 to " + head.API.String(),
		"rpc:             " + head.RPC.String(), "Node " + node.String()} {
		if !strings.Contains(out, want) {
			t.Errorf("version output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLI(t, "version", "--json")
	var info versionInfo
	if code != 0 || json.Unmarshal([]byte(out), &info) != nil || info.RPC != head.RPC.String() {
		t.Fatalf("json version: exit %d, %q", code, out)
	}
}

func TestUnknownCommandIsOneLine(t *testing.T) {
	code, _, errOut := runCLI(t, "no-such-command")
	if code == 0 {
		t.Fatal("unknown command exited 0")
	}
	if strings.Contains(errOut, "goroutine") || strings.Contains(errOut, "panic") {
		t.Fatalf("stack trace on stderr: %s", errOut)
	}
}

// TestConfigFileAfterTheCommand is issue 31's `rivet dbsync upgrade
// --config-file …` (conductor.md), which failed with "flag provided but not
// defined": --config-file is accepted after any service or admin command
// and subcommand, as before it, and both places combine in order.
func TestConfigFileAfterTheCommand(t *testing.T) {
	dir := t.TempDir()
	conn := "sqlite:///" + filepath.Join(dir, "rivet.db")
	conf := dbsyncConfig(t, conn)
	bad := filepath.Join(dir, "bad.conf")
	if err := os.WriteFile(bad, []byte("[api]\nport = 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"dbsync", "create-schema", "--config-file", conf},
		{"dbsync", "upgrade", "--config-file", conf},
		{"--config-file", conf, "dbsync", "version"},
		{"dbsync", "--config-file", conf, "version"},
		{"upgrade", "check", "--config-file", conf},
		{"upgrade", "status", "--config-file", conf},
		{"config", "check", "--config-file", conf},
	} {
		if code, _, errOut := runCLI(t, args...); code != 0 {
			t.Errorf("rivet %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
	}
	// Files after the command come after (override) those before it.
	code, _, errOut := runCLI(t, "--config-file", conf, "config", "check", "--config-file", bad)
	if code != 1 || !strings.Contains(errOut, "[api] port: 0 is out of range") {
		t.Errorf("config check with a bad second file: exit %d: %s", code, errOut)
	}
	// Client commands read no configuration file and do not offer the flag.
	if code, _, errOut := runCLI(t, "node", "list", "--config-file", conf); code == 0 || !strings.Contains(errOut, "flag provided but not defined") {
		t.Errorf("node list --config-file: exit %d: %s", code, errOut)
	}
}

// TestConfigCheckRefusesTheOldGuideLine is issue 31's install guide line,
// which `config check` said was OK: now it names the line and the fix, and
// a service refuses to start with the same message.
func TestConfigCheckRefusesTheOldGuideLine(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "rivet.conf")
	if err := os.WriteFile(conf, []byte("[DEFAULT]\nhost = cond1.example.com          # unique per service host; conductors are known by it\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// One line: problemLines collapses the value's blanks.
	want := `config file ` + conf + `, line 2: [DEFAULT] host: the value "cond1.example.com # unique per service host; conductors are known by it" ` +
		`holds an inline comment: a value runs to the end of its line, comments included (as in oslo.config); move the comment to a line of its own starting with #`
	code, _, errOut := runCLI(t, "config", "check", "--config-file", conf)
	if code != 1 || errOut != "rivet: "+want+"\n" {
		t.Errorf("config check: exit %d: %q\nwant %q", code, errOut, want)
	}
	code, _, errOut = runCLI(t, "--config-file", conf, "conductor")
	if code != 2 || !strings.Contains(errOut, want) {
		t.Errorf("conductor: exit %d: %s", code, errOut)
	}
}
