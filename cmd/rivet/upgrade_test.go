package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUpgradeCheckExitCodes(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "rivet.conf")
	if err := os.WriteFile(conf, []byte("[database]\nconnection = sqlite:///"+filepath.Join(dir, "r.db")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "--config-file", conf, "upgrade", "check")
	if code != 2 || !strings.Contains(out, "rivet dbsync create-schema") {
		t.Fatalf("empty database: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, "--config-file", conf, "dbsync", "create-schema"); code != 0 {
		t.Fatalf("create-schema: exit %d: %s", code, errOut)
	}
	code, out, _ = runCLI(t, "--config-file", conf, "upgrade", "check")
	if code != 0 || strings.Contains(out, "Failure") || strings.Contains(out, "Warning") {
		t.Fatalf("fresh schema: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "--config-file", conf, "upgrade", "status", "--json")
	if code != 0 || !strings.Contains(out, `"auto_pin": "HEAD"`) {
		t.Fatalf("status --json: exit %d\n%s", code, out)
	}
}
