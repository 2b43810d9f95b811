package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoadOverrideOrder(t *testing.T) {
	dir := t.TempDir()
	a := writeConf(t, dir, "a.conf", `
[DEFAULT]
log_level = debug
pin_release_version = auto

[api]
port = 1111
max_limit = 10

[conductor]
heartbeat_interval = 5
`)
	b := writeConf(t, dir, "b.conf", `
# comments and blank lines are fine
[api]
port = 2222
enable_ssl_api = yes
cert_file = /etc/rivet/api.pem
key_file = "/etc/rivet/api key.pem"

[conductor]
enabled_hardware_types = ipmi , redfish,
heartbeat_timeout = 1m30s

[ipmi]
min_command_interval = 0.25

[json_rpc]
password = p#ss ;w%(host)s\
`)
	tests := map[string]struct {
		files   []string
		environ []string
		want    func(c *Config)
	}{
		"defaults": {},
		"one file": {files: []string{a}, want: func(c *Config) {
			c.Default.LogLevel, c.Default.PinReleaseVersion = "debug", "auto"
			c.API.Port, c.API.MaxLimit = 1111, 10
			c.Conductor.HeartbeatInterval = 5 * time.Second
		}},
		"later file wins": {files: []string{a, b}, want: func(c *Config) {
			c.Default.LogLevel, c.Default.PinReleaseVersion = "debug", "auto"
			c.API.Port, c.API.MaxLimit = 2222, 10
			c.API.EnableSSLAPI, c.API.CertFile, c.API.KeyFile = true, "/etc/rivet/api.pem", "/etc/rivet/api key.pem"
			c.Conductor.HeartbeatInterval, c.Conductor.HeartbeatTimeout = 5*time.Second, 90*time.Second
			c.Conductor.EnabledHardwareTypes = []string{"ipmi", "redfish"}
			c.IPMI.MinCommandInterval = 250 * time.Millisecond
			c.JSONRPC.Password = `p#ss ;w%(host)s\`
		}},
		"reversed order": {files: []string{b, a}, want: func(c *Config) {
			c.Default.LogLevel, c.Default.PinReleaseVersion = "debug", "auto"
			c.API.Port, c.API.MaxLimit = 1111, 10
			c.API.EnableSSLAPI, c.API.CertFile, c.API.KeyFile = true, "/etc/rivet/api.pem", "/etc/rivet/api key.pem"
			c.Conductor.HeartbeatInterval, c.Conductor.HeartbeatTimeout = 5*time.Second, 90*time.Second
			c.Conductor.EnabledHardwareTypes = []string{"ipmi", "redfish"}
			c.IPMI.MinCommandInterval = 250 * time.Millisecond
			c.JSONRPC.Password = `p#ss ;w%(host)s\`
		}},
		"environment overrides files": {files: []string{a}, environ: []string{
			"RIVET_API_PORT=3333",
			"RIVET_JSON_RPC_PORT=9999",
			"RIVET_DEFAULT_PIN_RELEASE_VERSION=",
			"RIVET_DATABASE_CONNECTION=postgresql://rivet@db:5432/rivet",
			"RIVET_CONDUCTOR_PLUGIN_CHECKSUMS=rivet-driver-x:" + strings.Repeat("ab", 32),
			"RIVET_REDFISH_USE_SESSIONS=off",
		}, want: func(c *Config) {
			c.Default.LogLevel = "debug"
			c.API.Port, c.API.MaxLimit = 3333, 10
			c.Conductor.HeartbeatInterval = 5 * time.Second
			c.JSONRPC.Port = 9999
			c.Database.Connection = "postgresql://rivet@db:5432/rivet"
			c.Conductor.PluginChecksums = []string{"rivet-driver-x:" + strings.Repeat("ab", 32)}
			c.Redfish.UseSessions = false
		}},
		"unknown environment variables are ignored": {environ: []string{
			"RIVET_URL=http://rivet:6385", "RIVET_API_VERSION=1.31", "RIVET_TEST_POSTGRES_DSN=x",
			"RIVET_NOSUCH_OPTION=1", "RIVET_API_NOPE=1", "RIVET_CONFIG_FILE=/x", "PATH=/bin", "NOEQUALS",
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Load(tc.files, tc.environ)
			if err != nil {
				t.Fatal(err)
			}
			want := Default()
			if tc.want != nil {
				tc.want(want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	tests := map[string]struct {
		file    string // content of bad.conf, when set
		environ []string
		want    []string // problems; "FILE" stands for bad.conf's path
	}{
		"unknown option": {file: "[api]\nprot = 6385\n",
			want: []string{`config file FILE: [api] prot: unknown option (did you mean "port"?)`}},
		"unknown option of another section": {file: "[database]\npassword = hunter2\n",
			want: []string{`config file FILE: [database] password: unknown option (it is an option of [json_rpc])`}},
		"unknown option, no hint": {file: "[DEFAULT]\nfrobnicate = 1\n",
			want: []string{`config file FILE: [DEFAULT] frobnicate: unknown option`}},
		"unknown section": {file: "[conductr]\nheartbeat_interval = 10\n",
			want: []string{`config file FILE: [conductr]: unknown section (did you mean "conductor"?)`}},
		"section in the wrong case": {file: "[default]\nhost = x\n",
			want: []string{`config file FILE: [default]: unknown section (did you mean "DEFAULT"?)`}},
		"not ini": {file: "[api]\nport 6385\n",
			want: []string{`config file FILE: line 2 is not a [section] header, a comment or option = value`}},
		"unclosed section": {file: "[api]\nport = 1\n[password = s3cr3t\n",
			want: []string{`config file FILE: line 3 is a [section] header without its closing ]`}},
		"bad bool": {file: "[api]\nenable_ssl_api = maybe\n",
			want: []string{`config file FILE: [api] enable_ssl_api: "maybe" is not a boolean: use true/false, yes/no, on/off or 1/0`}},
		"bad int": {file: "[api]\nport = 63 85\n",
			want: []string{`config file FILE: [api] port: "63 85" is not an integer`}},
		"bad duration": {file: "[conductor]\nheartbeat_interval = ten\n",
			want: []string{`config file FILE: [conductor] heartbeat_interval: "ten" is not a duration: use seconds (10, 0.5) or a Go duration (90s, 1m30s)`}},
		"bad choice": {file: "[DEFAULT]\nlog_level = loud\n",
			want: []string{`[DEFAULT] log_level: "loud" is not valid: valid values are debug, info, warn, error`}},
		"bad env int": {environ: []string{"RIVET_JSON_RPC_PORT=http"},
			want: []string{`environment variable RIVET_JSON_RPC_PORT: [json_rpc] port: "http" is not an integer`}},
		"bad env bool": {environ: []string{"RIVET_REDFISH_VERIFY_CA_DEFAULT=sure"},
			want: []string{`environment variable RIVET_REDFISH_VERIFY_CA_DEFAULT: [redfish] verify_ca_default: "sure" is not a boolean: use true/false, yes/no, on/off or 1/0`}},
		"bad env duration": {environ: []string{"RIVET_IPMI_COMMAND_TIMEOUT=2 seconds"},
			want: []string{`environment variable RIVET_IPMI_COMMAND_TIMEOUT: [ipmi] command_timeout: "2 seconds" is not a duration: use seconds (10, 0.5) or a Go duration (90s, 1m30s)`}},
		"parse and validation problems together": {file: "[api]\nport = 0\nmax_limit = x\n[nope]\n",
			want: []string{
				`config file FILE: [api] max_limit: "x" is not an integer`,
				`config file FILE: [nope]: unknown section`,
				`[api] port: 0 is out of range 1..65535`,
			}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var files []string
			path := ""
			if tc.file != "" {
				path = writeConf(t, dir, strings.ReplaceAll(name, " ", "_")+".conf", tc.file)
				files = []string{path}
			}
			c, err := Load(files, tc.environ)
			if err == nil {
				t.Fatalf("Load succeeded: %+v", c)
			}
			var want []string
			for _, w := range tc.want {
				want = append(want, strings.ReplaceAll(w, "FILE", path))
			}
			if diff := cmp.Diff(want, problems(err)); diff != "" {
				t.Fatalf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	good := writeConf(t, t.TempDir(), "good.conf", "[api]\nport = 1\n")
	_, err := Load([]string{good, "/nonexistent/rivet.conf"}, nil)
	want := []string{"config file /nonexistent/rivet.conf: cannot read: no such file or directory"}
	if diff := cmp.Diff(want, problems(err)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	_, err = Load([]string{t.TempDir()}, nil)
	if err == nil || !strings.Contains(err.Error(), "config file /") {
		t.Fatalf("reading a directory: %v", err)
	}
}

// TestSecretsNeverShown loads configurations whose every problem involves a
// secret and checks the secret appears in no message.
func TestSecretsNeverShown(t *testing.T) {
	dir := t.TempDir()
	tests := map[string]struct {
		file    string
		environ []string
		want    string // a problem that must be reported, masked
	}{
		"DSN with a bad scheme": {file: "[database]\nconnection = oracle://admin:s3cr3t-pw@db/rivet\n",
			want: `[database] connection: "oracle://admin:******@db/rivet" is not a supported database URL`},
		"DSN password in a query": {file: "[database]\nconnection = odbc://db/rivet?user=a&password=s3cr3t-pw\n",
			want: `"odbc://db/rivet?user=a&password=******"`},
		"DSN password with @ and : in it": {environ: []string{"RIVET_DATABASE_CONNECTION=oracle://admin:s3cr3t-pw:@x@db/rivet"},
			want: `"oracle://admin:******@db/rivet"`},
		"password in the wrong section": {file: "[database]\npassword = s3cr3t-pw\n",
			want: `[database] password: unknown option`},
		"password line without =": {file: "[json_rpc]\npassword s3cr3t-pw\n",
			want: `line 2 is not a [section] header`},
		"unclosed section holding a password": {file: "[json_rpc\npassword = s3cr3t-pw\n",
			want: `line 1 is a [section] header without its closing ]`},
		"password with other problems": {file: "[json_rpc]\npassword = s3cr3t-pw\nauth_strategy = kerberos\n",
			want: `[json_rpc] auth_strategy: "kerberos" is not valid: valid values are "", noauth, http_basic`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var files []string
			if tc.file != "" {
				files = []string{writeConf(t, dir, strings.ReplaceAll(name, " ", "_")+".conf", tc.file)}
			}
			_, err := Load(files, tc.environ)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Fatalf("secret in error: %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q lacks %q", err, tc.want)
			}
		})
	}
	o, _ := Lookup("json_rpc", "password")
	if got := o.display("s3cr3t-pw") + o.displayRaw("s3cr3t-pw"); strings.Contains(got, "s3cr3t") {
		t.Fatalf("password displayed as %q", got)
	}
}

// TestLoadRefusesInlineCommentsAndBadHosts is issue 31's install guide
// line: a comment after a value is part of the value (as in oslo.config),
// which made [DEFAULT] host "cond1.example.com          # unique per…",
// a name every API then failed to dial. Both are refused, naming the line.
func TestLoadRefusesInlineCommentsAndBadHosts(t *testing.T) {
	dir := t.TempDir()
	tests := map[string]struct {
		file string
		want []string
	}{
		"host with a comment": {file: "[DEFAULT]\n# the name\nhost = cond1.example.com    # unique per host\n",
			want: []string{`config file FILE, line 3: [DEFAULT] host: the value "cond1.example.com    # unique per host" holds an inline comment: ` +
				`a value runs to the end of its line, comments included (as in oslo.config); move the comment to a line of its own starting with #`}},
		"semicolon comment": {file: "[api]\nhost_ip = 0.0.0.0 ; everywhere\n",
			want: []string{`config file FILE, line 2: [api] host_ip: the value "0.0.0.0 ; everywhere" holds an inline comment: ` +
				`a value runs to the end of its line, comments included (as in oslo.config); move the comment to a line of its own starting with #`}},
		"masked value": {file: "[database]\nconnection = postgresql://rivet:hunter2@db1/rivet  # primary\n",
			want: []string{`config file FILE, line 2: [database] connection: the value "postgresql://rivet:******@db1/rivet  # primary" holds an inline comment: ` +
				`a value runs to the end of its line, comments included (as in oslo.config); move the comment to a line of its own starting with #`}},
		"host with a space": {file: "[DEFAULT]\nhost = cond1 example\n",
			want: []string{`[DEFAULT] host: "cond1 example" is not a host name: ' ' is not allowed; use a name (letters, digits, "-", ".", "_") ` +
				`or an IP address, with any comment on a line of its own`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			path := writeConf(t, dir, strings.ReplaceAll(name, " ", "_")+".conf", tc.file)
			_, err := Load([]string{path}, nil)
			var want []string
			for _, w := range tc.want {
				want = append(want, strings.ReplaceAll(w, "FILE", path))
			}
			if diff := cmp.Diff(want, problems(err)); diff != "" {
				t.Fatalf("problems (-want +got):\n%s", diff)
			}
		})
	}
	// A # or ; inside a value, not after a blank, is no comment.
	for _, ok := range []string{"cond1.example.com", "10.0.0.21", "::1", "node_7"} {
		path := writeConf(t, dir, "ok.conf", "[DEFAULT]\nhost = "+ok+"\nhttp_basic_auth_user_file = /etc/rivet/a#b;c\n")
		if _, err := Load([]string{path}, nil); err != nil {
			t.Errorf("host = %s: %v", ok, err)
		}
	}
}
