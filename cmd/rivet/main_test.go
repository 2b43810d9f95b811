package main

import (
	"bytes"
	"encoding/json"
	"fmt"
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
