package main

import (
	"context"
	"log/slog"
	"net"
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

// TestWarnUnresolvedHost: a conductor open to other hosts under a name
// that does not resolve says so at start; on loopback, or named by an IP
// address, it says nothing.
func TestWarnUnresolvedHost(t *testing.T) {
	fail := func(context.Context, string) ([]string, error) {
		return nil, &net.DNSError{Err: "no such host", Name: "cond1.example.com", IsNotFound: true}
	}
	for _, tc := range []struct {
		host, hostIP string
		warn         bool
	}{
		{"cond1.example.com", "10.0.0.21", true},
		{"cond1.example.com", "0.0.0.0", true},
		{"cond1.example.com", "127.0.0.1", false},
		{"10.0.0.21", "10.0.0.21", false},
	} {
		var buf strings.Builder
		warnUnresolvedHost(slog.New(slog.NewTextHandler(&buf, nil)), tc.host, tc.hostIP, fail)
		if got := strings.Contains(buf.String(), "does not resolve on this host"); got != tc.warn {
			t.Errorf("host %s, host_ip %s: warned %v, want %v: %s", tc.host, tc.hostIP, got, tc.warn, buf.String())
		}
	}
}
