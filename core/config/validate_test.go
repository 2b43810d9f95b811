package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestValidate(t *testing.T) {
	sum := strings.Repeat("0f", 32)
	tests := map[string]struct {
		mut  func(c *Config)
		want []string
	}{
		"defaults are valid": {mut: func(*Config) {}},
		"port above range":   {mut: func(c *Config) { c.API.Port = 70000 }, want: []string{"[api] port: 70000 is out of range 1..65535"}},
		"port below range":   {mut: func(c *Config) { c.JSONRPC.Port = 0 }, want: []string{"[json_rpc] port: 0 is out of range 1..65535"}},
		"minimum":            {mut: func(c *Config) { c.API.MaxLimit = 0 }, want: []string{"[api] max_limit: 0 is below the minimum 1"}},
		"partition exponent": {mut: func(c *Config) { c.Default.HashPartitionExponent = 17 }, want: []string{"[DEFAULT] hash_partition_exponent: 17 is out of range 1..16"}},
		"cipher suite":       {mut: func(c *Config) { c.IPMI.CipherSuite = -1 }, want: []string{"[ipmi] cipher_suite: -1 is out of range 0..17"}},
		"negative duration":  {mut: func(c *Config) { c.IPMI.MinCommandInterval = -time.Second }, want: []string{"[ipmi] min_command_interval: -1s is below the minimum 0s"}},
		"duration minimum":   {mut: func(c *Config) { c.Redfish.ConnectionTimeout = 500 * time.Millisecond }, want: []string{"[redfish] connection_timeout: 500ms is below the minimum 1s"}},
		"zero disables sync": {mut: func(c *Config) { c.Conductor.SyncPowerStateInterval = 0 }},
		"choice":             {mut: func(c *Config) { c.Default.AuthStrategy = "keystone" }, want: []string{`[DEFAULT] auth_strategy: "keystone" is not valid: valid values are noauth, http_basic`}},
		"tls version":        {mut: func(c *Config) { c.API.TLSMinimumVersion = "1.1" }, want: []string{`[api] tls_minimum_version: "1.1" is not valid: valid values are 1.2, 1.3`}},
		"transport":          {mut: func(c *Config) { c.Default.RPCTransport = "oslo" }, want: []string{`[DEFAULT] rpc_transport: "oslo" is not valid: valid values are json-rpc, local`}},
		"host_ip not an IP":  {mut: func(c *Config) { c.API.HostIP = "localhost" }, want: []string{`[api] host_ip: "localhost" is not an IP address`}},
		"IPv6 host_ip":       {mut: func(c *Config) { c.JSONRPC.HostIP = "::" }},
		"empty host":         {mut: func(c *Config) { c.Default.Host = "" }, want: []string{"[DEFAULT] host: must not be empty"}},
		"no hardware types":  {mut: func(c *Config) { c.Conductor.EnabledHardwareTypes = []string{} }, want: []string{"[conductor] enabled_hardware_types: must not be empty"}},
		"deploy interface": {mut: func(c *Config) { c.Conductor.DefaultDeployInterface = "iscsi" },
			want: []string{`[conductor] default_deploy_interface: "iscsi" is not a deploy interface: use ramdisk or direct`}},
		"direct deploy": {mut: func(c *Config) { c.Conductor.DefaultDeployInterface = "direct" }},
		"long group": {mut: func(c *Config) { c.Conductor.ConductorGroup = strings.Repeat("g", 256) },
			want: []string{"[conductor] conductor_group: value is 256 characters long, more than 255"}},
		"plugin checksums": {mut: func(c *Config) {
			c.Conductor.PluginChecksums = []string{"good:" + sum, "nocolon", ":" + sum, "short:abc"}
		}, want: []string{`[conductor] plugin_checksums: "nocolon", ":` + sum + `", "short:abc": want name:sha256 items, the checksum as 64 hex digits`}},
		"connection scheme": {mut: func(c *Config) { c.Database.Connection = "/var/lib/rivet.db" },
			want: []string{`[database] connection: "/var/lib/rivet.db" is not a supported database URL: use sqlite:///…, postgresql://… or mysql://…`}},
		"discovery without a driver": {mut: func(c *Config) { c.AutoDiscovery.Enabled = true },
			want: []string{"[auto_discovery] driver: must be set when [auto_discovery] enabled is true: the hardware type of the nodes discovery enrolls"}},
		"discovery with a driver":       {mut: func(c *Config) { c.AutoDiscovery.Enabled, c.AutoDiscovery.Driver = true, "ipmi" }},
		"mask_secrets choice":           {mut: func(c *Config) { c.InspectionRules.MaskSecrets = "some" }, want: []string{`[inspection_rules] mask_secrets: "some" is not valid: valid values are always, never, sensitive`}},
		"connection with driver suffix": {mut: func(c *Config) { c.Database.Connection = "mysql+pymysql://u:p@h/db" }},
		"heartbeat timeout not above interval": {mut: func(c *Config) { c.Conductor.HeartbeatTimeout = 10 * time.Second },
			want: []string{"[conductor] heartbeat_timeout: 10s must be greater than [conductor] heartbeat_interval (10s)"}},
		"forget timeout not above heartbeat timeout": {mut: func(c *Config) {
			c.Default.ServiceForgetTimeout = 2 * time.Minute
			c.Conductor.HeartbeatTimeout = 5 * time.Minute
		},
			want: []string{"[DEFAULT] service_forget_timeout: 2m0s must be greater than [conductor] heartbeat_timeout (5m0s)"}},
		"forget timeout below its minimum": {mut: func(c *Config) { c.Default.ServiceForgetTimeout = 30 * time.Second },
			want: []string{"[DEFAULT] service_forget_timeout: 30s is below the minimum 1m0s", "[DEFAULT] service_forget_timeout: 30s must be greater than [conductor] heartbeat_timeout (1m0s)"}},
		// Capped at max_open_connections (database/sql does): the default
		// idle count stays valid with fewer open connections.
		"idle above open": {mut: func(c *Config) { c.Database.MaxOpenConnections = 10 }},
		"ssl api without cert and key": {mut: func(c *Config) { c.API.EnableSSLAPI = true }, want: []string{
			"[api] cert_file: must be set when [api] enable_ssl_api is true",
			"[api] key_file: must be set when [api] enable_ssl_api is true",
		}},
		"ssl api without key": {mut: func(c *Config) { c.API.EnableSSLAPI, c.API.CertFile = true, "/c.pem" }, want: []string{
			"[api] key_file: must be set when [api] enable_ssl_api is true",
		}},
		"json-rpc ssl without cert": {mut: func(c *Config) { c.JSONRPC.UseSSL, c.JSONRPC.KeyFile = true, "/k.pem" }, want: []string{
			"[json_rpc] cert_file: must be set when [json_rpc] use_ssl is true",
		}},
		"json-rpc http_basic via DEFAULT without credentials": {mut: func(c *Config) { c.Default.AuthStrategy = "http_basic" }, want: []string{
			"[json_rpc] username: must be set when JSON-RPC uses http_basic authentication",
			"[json_rpc] password: must be set when JSON-RPC uses http_basic authentication",
		}},
		"projects file without http_basic": {mut: func(c *Config) { c.API.HTTPBasicProjectsFile = "/etc/rivet/projects" }, want: []string{
			"[api] http_basic_projects_file: needs [DEFAULT] auth_strategy = http_basic: without it requests carry no user, and no project would restrict anything",
		}},
		"projects file with http_basic": {mut: func(c *Config) {
			c.API.HTTPBasicProjectsFile, c.Default.AuthStrategy, c.Default.RPCTransport = "/etc/rivet/projects", "http_basic", "local"
		}},
		"json-rpc noauth overrides DEFAULT http_basic":  {mut: func(c *Config) { c.Default.AuthStrategy, c.JSONRPC.AuthStrategy = "http_basic", "noauth" }},
		"local transport needs no json-rpc credentials": {mut: func(c *Config) { c.Default.AuthStrategy, c.Default.RPCTransport = "http_basic", "local" }},
		"client certificates need TLS and a CA": {mut: func(c *Config) { c.JSONRPC.RequireClientCert = true }, want: []string{
			"[json_rpc] cafile: must be set when [json_rpc] require_client_certificate is true",
			"[json_rpc] use_ssl: must be true when [json_rpc] require_client_certificate is true",
		}},
		"unknown pin": {mut: func(c *Config) { c.Default.PinReleaseVersion = "ocata" },
			want: []string{`[DEFAULT] pin_release_version: unknown release "ocata": valid values are "" (latest), auto, 0.1, anvil, 0.2, bellows, 0.3, crucible, or a point release of one (e.g. 0.3.0)`}},
		"several problems, one error each": {mut: func(c *Config) {
			c.API.Port, c.Default.LogLevel, c.Conductor.HeartbeatInterval = 70000, "trace", 2*time.Minute
		}, want: []string{
			`[DEFAULT] log_level: "trace" is not valid: valid values are debug, info, warn, error`,
			"[api] port: 70000 is out of range 1..65535",
			"[conductor] heartbeat_timeout: 1m0s must be greater than [conductor] heartbeat_interval (2m0s)",
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := Default()
			tc.mut(c)
			if diff := cmp.Diff(tc.want, problems(c.Validate())); diff != "" {
				t.Fatalf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPinAgainstTable(t *testing.T) {
	tb := testReleases(t)
	tests := map[string]struct {
		pin     string
		wantErr string
		release string
	}{
		"latest":  {pin: "", release: "HEAD"},
		"auto":    {pin: "auto", release: "HEAD"},
		"semver":  {pin: "0.1", release: "0.1"},
		"name":    {pin: "anvil", release: "0.1"},
		"point":   {pin: "0.1.1", release: "0.1"},
		"unknown": {pin: "ocata", wantErr: `[DEFAULT] pin_release_version: unknown release "ocata": valid values are "" (latest), auto, 0.1, anvil, or a point release of one (e.g. 0.1.0)`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := Default()
			c.Default.PinReleaseVersion = tc.pin
			err := c.ValidateFor(tb)
			p, perr := c.Pin(tb)
			if tc.wantErr != "" {
				if diff := cmp.Diff([]string{tc.wantErr}, problems(err)); diff != "" {
					t.Fatalf("ValidateFor (-want +got):\n%s", diff)
				}
				if perr == nil || perr.Error() != tc.wantErr {
					t.Fatalf("Pin error = %v", perr)
				}
				return
			}
			if err != nil || perr != nil {
				t.Fatalf("ValidateFor: %v; Pin: %v", err, perr)
			}
			if got := tb.Resolve(p, nil).Version; got != tc.release {
				t.Fatalf("resolves to %s, want %s", got, tc.release)
			}
		})
	}
	// Load takes the table through Source.
	path := writeConf(t, t.TempDir(), "pin.conf", "[DEFAULT]\npin_release_version = anvil\n")
	if _, err := (Source{Files: []string{path}, Releases: tb}).Load(); err != nil {
		t.Fatalf("Source.Load with test table: %v", err)
	}
	if _, err := Load([]string{path}, nil); err != nil {
		t.Fatalf("Load with the default table, which has 0.1 (anvil): %v", err)
	}
	path = writeConf(t, t.TempDir(), "pin.conf", "[DEFAULT]\npin_release_version = ocata\n")
	if _, err := Load([]string{path}, nil); err == nil || !strings.Contains(err.Error(), `unknown release "ocata"`) {
		t.Fatalf("Load with the default table: %v", err)
	}
}
