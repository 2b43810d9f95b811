package main

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/config"
)

// TestUnauthenticatedListenersStopAtStart: each server refuses, exit 2,
// before opening its database, when it would serve node data without
// authentication off loopback, naming the options that fix it.
func TestUnauthenticatedListenersStopAtStart(t *testing.T) {
	tests := map[string]struct {
		args []string
		env  map[string]string
		want []string
	}{
		"api": {args: []string{"api"}, env: map[string]string{"RIVET_API_HOST_IP": "0.0.0.0"},
			want: []string{"api: invalid configuration: [api] host_ip: 0.0.0.0 is not a loopback address",
				"[DEFAULT] auth_strategy = http_basic", "[api] allow_unauthenticated_remote = true"}},
		"conductor": {args: []string{"conductor"}, env: map[string]string{"RIVET_JSON_RPC_HOST_IP": "::"},
			want: []string{"conductor: invalid configuration: [json_rpc] host_ip: :: is not a loopback address",
				"[json_rpc] auth_strategy = http_basic", "[json_rpc] username and password", "[json_rpc] host_ip = 127.0.0.1"}},
		"all-in-one": {args: []string{"all-in-one"}, env: map[string]string{"RIVET_API_HOST_IP": "::"},
			want: []string{"all-in-one: invalid configuration: [api] host_ip: :: is not a loopback address"}},
		"dev": {args: []string{"dev", "--listen", "0.0.0.0:6385", "--state-dir", "STATE"},
			want: []string{"dev: --listen 0.0.0.0:6385: [api] host_ip: 0.0.0.0 is not a loopback address", "allow_unauthenticated_remote"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			// A database that is never opened: the refusal comes first.
			t.Setenv("RIVET_DATABASE_CONNECTION", "sqlite:///"+filepath.Join(dir, "missing", "never.db"))
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			args := []string{"rivet"}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "STATE", dir))
			}
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr: %s", code, stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
		})
	}
}

// TestLogNotices: an unauthenticated REST API logs at every start, as a
// warning when it is reachable off loopback (allowed explicitly), and a
// conductor says when its JSON-RPC sends credentials in clear.
func TestLogNotices(t *testing.T) {
	tests := map[string]struct {
		mut     func(c *config.Config)
		service config.Service
		want    []string // each a line fragment: level then message
	}{
		"api on loopback": {mut: func(*config.Config) {}, service: config.ServiceAPI,
			want: []string{`level=INFO msg="REST API without authentication`}},
		"api allowed off loopback": {mut: func(c *config.Config) { c.API.HostIP, c.API.AllowUnauthenticatedRemote = "0.0.0.0", true },
			service: config.ServiceAPI, want: []string{`level=WARN msg="REST API without authentication on 0.0.0.0`}},
		"conductor, http_basic in clear": {mut: func(c *config.Config) { c.JSONRPC.HostIP, c.JSONRPC.AuthStrategy = "0.0.0.0", "http_basic" },
			service: config.ServiceConductor, want: []string{`level=WARN msg="JSON-RPC on 0.0.0.0 uses http_basic without TLS`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := config.Default()
			tc.mut(cfg)
			var buf bytes.Buffer
			logNotices(slog.New(slog.NewTextHandler(&buf, nil)), cfg, tc.service)
			if n := strings.Count(buf.String(), "\n"); n != len(tc.want) {
				t.Fatalf("%d lines logged, want %d:\n%s", n, len(tc.want), buf.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("log lacks %q:\n%s", w, buf.String())
				}
			}
		})
	}
}
