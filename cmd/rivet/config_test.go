package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/config"
	"github.com/urfave/cli/v2"
)

func writeConf(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigCheck(t *testing.T) {
	good := writeConf(t, "good.conf", "[api]\nport = 7000\n")
	unknown := writeConf(t, "bad.conf", "[api]\nprot = 7000\n")
	twoBad := writeConf(t, "two.conf", "[api]\nport = 0\n[DEFAULT]\nlog_level = loud\n")
	secret := writeConf(t, "secret.conf", "[database]\nconnection = oracle://u:s3cr3t@db/rivet\n")
	openRPC := writeConf(t, "open-rpc.conf", "[json_rpc]\nhost_ip = 0.0.0.0\n")
	openBoth := writeConf(t, "open.conf", "[api]\nhost_ip = ::\n[json_rpc]\nhost_ip = 0.0.0.0\n")
	tests := map[string]struct {
		args   []string
		env    map[string]string
		code   int
		stdout string
		stderr []string // each must appear
		nLines int      // stderr line count, when set
	}{
		"ok":                {args: []string{"config", "check", "--config-file", good}, stdout: "configuration OK\n"},
		"global flag":       {args: []string{"--config-file", good, "config", "check"}, stdout: "configuration OK\n"},
		"unknown option":    {args: []string{"config", "check", "--config-file", unknown}, code: 1, nLines: 1, stderr: []string{unknown, "[api] prot: unknown option", `"port"`}},
		"global then local": {args: []string{"--config-file", good, "config", "check", "--config-file", unknown}, code: 1, stderr: []string{"[api] prot"}},
		"missing file":      {args: []string{"--config-file", "/nonexistent", "config", "check"}, code: 1, nLines: 1, stderr: []string{"config file /nonexistent: cannot read"}},
		"several problems": {args: []string{"config", "check", "--config-file", twoBad}, code: 1, nLines: 3,
			stderr: []string{"2 configuration problems", "[api] port: 0 is out of range 1..65535", `[DEFAULT] log_level: "loud"`}},
		"environment": {args: []string{"config", "check"}, env: map[string]string{"RIVET_JSON_RPC_PORT": "x", "RIVET_URL": "http://x"}, code: 1, nLines: 1,
			stderr: []string{"environment variable RIVET_JSON_RPC_PORT: [json_rpc] port"}},
		"secret masked": {args: []string{"config", "check", "--config-file", secret}, code: 1, stderr: []string{"u:******@db"}},
		"open JSON-RPC": {args: []string{"config", "check", "--config-file", openRPC}, code: 1, nLines: 1,
			stderr: []string{"[json_rpc] host_ip: 0.0.0.0 is not a loopback address", "[json_rpc] auth_strategy = http_basic"}},
		"open JSON-RPC, API host": {args: []string{"config", "check", "--config-file", openRPC, "--service", "api"}, stdout: "configuration OK\n"},
		"open REST and JSON-RPC": {args: []string{"config", "check", "--config-file", openBoth}, code: 1, nLines: 3,
			stderr: []string{"2 configuration problems", "[api] host_ip: :: is not", "[json_rpc] host_ip: 0.0.0.0 is not"}},
		"open REST, conductor host": {args: []string{"config", "check", "--config-file", openBoth, "--service", "conductor",
			"--service", "all-in-one"}, code: 1, nLines: 3, stderr: []string{"[api] host_ip: :: is not", "[json_rpc] host_ip"}},
		"open REST, allowed": {args: []string{"config", "check", "--config-file", openBoth, "--service", "api"},
			env: map[string]string{"RIVET_API_ALLOW_UNAUTHENTICATED_REMOTE": "true"}, stdout: "configuration OK\n"},
		"unknown service": {args: []string{"config", "check", "--service", "web"}, code: 2, stderr: []string{`unknown --service "web"`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, out, errOut := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, errOut)
			}
			if tc.stdout != "" && out != tc.stdout {
				t.Errorf("stdout = %q, want %q", out, tc.stdout)
			}
			for _, want := range tc.stderr {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
			if tc.nLines > 0 && strings.Count(errOut, "\n") != tc.nLines {
				t.Errorf("stderr has %d lines, want %d:\n%s", strings.Count(errOut, "\n"), tc.nLines, errOut)
			}
			for _, never := range []string{"goroutine", "panic", "s3cr3t", "Incorrect Usage"} {
				if strings.Contains(errOut+out, never) {
					t.Errorf("output contains %q:\n%s%s", never, out, errOut)
				}
			}
		})
	}
}

func TestConfigSample(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		gen  func(*bytes.Buffer) error
	}{
		"ini":      {args: []string{"config", "sample"}, gen: func(b *bytes.Buffer) error { return config.Sample(b) }},
		"markdown": {args: []string{"config", "sample", "--format", "markdown"}, gen: func(b *bytes.Buffer) error { return config.Reference(b) }},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var want bytes.Buffer
			if err := tc.gen(&want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.String(), out); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
	code, _, errOut := runCLI(t, "config", "sample", "--format", "yaml")
	if code != 2 || !strings.Contains(errOut, `unknown --format "yaml"`) {
		t.Fatalf("bad format: exit %d, %q", code, errOut)
	}
}

// TestLoadConfig checks the helper servers use: files in order, then the
// environment; problems become one line and exit code 2.
func TestLoadConfig(t *testing.T) {
	a := writeConf(t, "a.conf", "[api]\nport = 1111\nmax_limit = 5\n")
	b := writeConf(t, "b.conf", "[api]\nport = 2222\n")
	bad := writeConf(t, "bad.conf", "[api]\nport = 0\nprot = 1\n")
	tests := map[string]struct {
		args     []string
		env      map[string]string
		port     int
		maxLimit int
		wantErr  string
	}{
		"defaults":        {port: 6385, maxLimit: 1000},
		"files in order":  {args: []string{"--config-file", a, "--config-file", b}, port: 2222, maxLimit: 5},
		"env var of flag": {env: map[string]string{"RIVET_CONFIG_FILE": a + "," + b}, port: 2222, maxLimit: 5},
		"env overrides":   {args: []string{"--config-file", a}, env: map[string]string{"RIVET_API_PORT": "3333"}, port: 3333, maxLimit: 5},
		"problems":        {args: []string{"--config-file", bad}, wantErr: "invalid configuration: config file " + bad + `: [api] prot: unknown option (did you mean "port"?); [api] port: 0 is out of range 1..65535`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			// A probe command stands in for a server calling loadConfig.
			var cfg *config.Config
			app := newApp(&bytes.Buffer{}, &bytes.Buffer{})
			app.Commands = append(app.Commands, &cli.Command{Name: "probe", Action: func(c *cli.Context) (err error) {
				cfg, err = loadConfig(c)
				return err
			}})
			err := app.Run(append(append([]string{"rivet"}, tc.args...), "probe"))
			if tc.wantErr != "" {
				var ec cli.ExitCoder
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v\nwant  %s", err, tc.wantErr)
				}
				if ec, _ = err.(cli.ExitCoder); ec == nil || ec.ExitCode() != 2 {
					t.Fatalf("err %T is not exit code 2", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.API.Port != tc.port || cfg.API.MaxLimit != tc.maxLimit {
				t.Fatalf("port %d max_limit %d", cfg.API.Port, cfg.API.MaxLimit)
			}
		})
	}
}
