package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rivet conductor refuses to start, in one line, on what would make it
// misbehave: an out-of-date schema, a local RPC transport, a bad option.
func TestConductorRefusesToStart(t *testing.T) {
	tests := map[string]struct {
		conf     string
		wantCode int
		want     string
	}{
		"empty database": {
			conf:     "[database]\nconnection = sqlite:///%s/rivet.db\n",
			wantCode: 2, want: "schema is not up to date",
		},
		"local transport": {
			conf:     "[DEFAULT]\nrpc_transport = local\n[database]\nconnection = sqlite:///%s/rivet.db\n",
			wantCode: 2, want: "rpc_transport must be json-rpc",
		},
		"bad option": {
			conf:     "[conductor]\nheartbeat_timeout = soon\n[database]\nconnection = sqlite:///%s/rivet.db\n",
			wantCode: 2, want: "heartbeat_timeout",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "rivet.conf")
			if err := os.WriteFile(path, []byte(strings.ReplaceAll(tc.conf, "%s", dir)), 0o600); err != nil {
				t.Fatal(err)
			}
			code, _, errOut := runCLI(t, "--config-file", path, "conductor")
			if code != tc.wantCode || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Fatalf("exit %d, stderr %q; want exit %d and one line containing %q", code, errOut, tc.wantCode, tc.want)
			}
			if name == "empty database" && !strings.Contains(errOut, "run `rivet dbsync upgrade`") {
				t.Fatalf("message does not say how to fix it: %q", errOut)
			}
		})
	}
}
