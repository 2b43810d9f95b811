package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidateService checks which listeners each service refuses, and
// that every refusal names the option at fault and the options that fix it.
func TestValidateService(t *testing.T) {
	remote := func(c *Config) { c.API.HostIP, c.JSONRPC.HostIP = "0.0.0.0", "0.0.0.0" }
	jsonRPCFix := []string{"[json_rpc] auth_strategy = http_basic", "[json_rpc] http_basic_auth_user_file",
		"[json_rpc] username and password", "[json_rpc] use_ssl, cert_file", "cafile", "[json_rpc] host_ip = 127.0.0.1"}
	apiFix := []string{"[DEFAULT] auth_strategy = http_basic", "[DEFAULT] http_basic_auth_user_file",
		"[api] host_ip = 127.0.0.1", "[api] allow_unauthenticated_remote = true"}
	tests := map[string]struct {
		mut func(c *Config)
		// want maps each service to the options its problems are about,
		// in order; a service left out has none.
		want map[Service][]string
		// fix lists what every problem of the service must mention.
		fix map[Service][]string
		// cause is a phrase the JSON-RPC problem must hold.
		cause string
	}{
		"defaults listen on loopback": {mut: func(*Config) {}},
		"every address, noauth": {mut: remote,
			want: map[Service][]string{ServiceAPI: {"[api] host_ip"}, ServiceConductor: {"[json_rpc] host_ip"}, ServiceAllInOne: {"[api] host_ip"}},
			fix:  map[Service][]string{ServiceAPI: apiFix, ServiceConductor: jsonRPCFix, ServiceAllInOne: apiFix},
			// [json_rpc] auth_strategy is unset: the message says where noauth comes from.
			cause: "[json_rpc] auth_strategy is unset and [DEFAULT] auth_strategy is noauth"},
		"IPv6 any address, explicit json_rpc noauth": {mut: func(c *Config) {
			c.JSONRPC.HostIP, c.JSONRPC.AuthStrategy = "::", "noauth"
		}, want: map[Service][]string{ServiceConductor: {"[json_rpc] host_ip"}}, fix: map[Service][]string{ServiceConductor: jsonRPCFix},
			cause: "[json_rpc] auth_strategy is noauth:"},
		"a LAN address with REST http_basic but JSON-RPC noauth": {mut: func(c *Config) {
			remote(c)
			c.JSONRPC.HostIP = "10.0.0.5"
			c.Default.AuthStrategy, c.JSONRPC.AuthStrategy = "http_basic", "noauth"
		}, want: map[Service][]string{ServiceConductor: {"[json_rpc] host_ip"}}, fix: map[Service][]string{ServiceConductor: jsonRPCFix}},
		"other loopback addresses are loopback": {mut: func(c *Config) { c.API.HostIP, c.JSONRPC.HostIP = "127.0.0.2", "::1" }},
		"http_basic everywhere": {mut: func(c *Config) {
			remote(c)
			c.Default.AuthStrategy = "http_basic"
		}},
		"http_basic JSON-RPC only: the API refuses, the conductor does not": {mut: func(c *Config) {
			remote(c)
			c.JSONRPC.AuthStrategy = "http_basic"
		}, want: map[Service][]string{ServiceAPI: {"[api] host_ip"}, ServiceAllInOne: {"[api] host_ip"}},
			fix: map[Service][]string{ServiceAPI: apiFix, ServiceAllInOne: apiFix}},
		"unauthenticated remote API explicitly allowed": {mut: func(c *Config) {
			c.API.HostIP, c.API.AllowUnauthenticatedRemote = "::", true
		}},
		"allow_unauthenticated_remote does not open JSON-RPC": {mut: func(c *Config) {
			remote(c)
			c.API.AllowUnauthenticatedRemote = true
		}, want: map[Service][]string{ServiceConductor: {"[json_rpc] host_ip"}}, fix: map[Service][]string{ServiceConductor: jsonRPCFix}},
		"mutual TLS authenticates JSON-RPC callers": {mut: func(c *Config) {
			c.JSONRPC.HostIP, c.JSONRPC.UseSSL, c.JSONRPC.RequireClientCert = "0.0.0.0", true, true
			c.JSONRPC.CertFile, c.JSONRPC.KeyFile, c.JSONRPC.CAFile = "c.pem", "k.pem", "ca.pem"
		}},
		"TLS without client certificates is not authentication": {mut: func(c *Config) {
			c.JSONRPC.HostIP, c.JSONRPC.UseSSL = "0.0.0.0", true
			c.JSONRPC.CertFile, c.JSONRPC.KeyFile, c.JSONRPC.CAFile = "c.pem", "k.pem", "ca.pem"
		}, want: map[Service][]string{ServiceConductor: {"[json_rpc] host_ip"}}, fix: map[Service][]string{ServiceConductor: append(jsonRPCFix, "require_client_certificate = true")}},
		"local transport opens no JSON-RPC port": {mut: func(c *Config) {
			c.JSONRPC.HostIP, c.Default.RPCTransport = "0.0.0.0", "local"
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := Default()
			c.JSONRPC.Username, c.JSONRPC.Password = "api", "s3cret"
			tc.mut(c)
			if err := c.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			for _, s := range Services {
				err := c.ValidateService(s)
				var got []string
				for _, p := range Problems(err) {
					var e *Error
					if !errors.As(p, &e) {
						t.Fatalf("%s: problem %v is not an *Error", s, p)
					}
					got = append(got, "["+e.Section+"] "+e.Option)
					for _, want := range tc.fix[s] {
						if !strings.Contains(e.Problem, want) {
							t.Errorf("%s: problem %q does not name %q", s, e.Error(), want)
						}
					}
					if s == ServiceConductor && !strings.Contains(e.Problem, tc.cause) {
						t.Errorf("%s: problem %q does not say %q", s, e.Error(), tc.cause)
					}
				}
				if diff := cmp.Diff(tc.want[s], got); diff != "" {
					t.Errorf("%s: problems about (-want +got):\n%s", s, diff)
				}
			}
		})
	}
}

func TestServiceNotices(t *testing.T) {
	tests := map[string]struct {
		mut     func(c *Config)
		service Service
		// want holds one phrase per notice, prefixed "warn: " for a warning.
		want []string
	}{
		"API on loopback without auth": {mut: func(*Config) {}, service: ServiceAPI,
			want: []string{"info: REST API without authentication"}},
		"API allowed off loopback without auth": {mut: func(c *Config) { c.API.HostIP, c.API.AllowUnauthenticatedRemote = "0.0.0.0", true },
			service: ServiceAPI, want: []string{"warn: REST API without authentication on 0.0.0.0"}},
		"API with http_basic": {mut: func(c *Config) { c.API.HostIP, c.Default.AuthStrategy = "0.0.0.0", "http_basic" },
			service: ServiceAPI},
		"all-in-one warns as the API does": {mut: func(c *Config) { c.API.HostIP, c.API.AllowUnauthenticatedRemote = "::", true },
			service: ServiceAllInOne, want: []string{"warn: REST API without authentication on ::"}},
		"conductor on loopback": {mut: func(*Config) {}, service: ServiceConductor,
			want: []string{"info: only API services on this host can reach"}},
		"conductor off loopback, http_basic without TLS": {mut: func(c *Config) {
			c.JSONRPC.HostIP, c.JSONRPC.AuthStrategy = "0.0.0.0", "http_basic"
		}, service: ServiceConductor, want: []string{"warn: uses http_basic without TLS"}},
		"conductor off loopback, http_basic with TLS": {mut: func(c *Config) {
			c.JSONRPC.HostIP, c.JSONRPC.AuthStrategy, c.JSONRPC.UseSSL = "10.0.0.5", "http_basic", true
		}, service: ServiceConductor},
		"the conductor says nothing of the REST API": {mut: func(c *Config) {
			c.API.HostIP, c.API.AllowUnauthenticatedRemote = "0.0.0.0", true
			c.JSONRPC.HostIP, c.JSONRPC.AuthStrategy, c.JSONRPC.UseSSL = "10.0.0.5", "http_basic", true
		}, service: ServiceConductor},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := Default()
			tc.mut(c)
			ns := c.ServiceNotices(tc.service)
			if len(ns) != len(tc.want) {
				t.Fatalf("notices %+v, want %d", ns, len(tc.want))
			}
			for i, n := range ns {
				level, phrase, _ := strings.Cut(tc.want[i], ": ")
				if n.Warn != (level == "warn") || !strings.Contains(n.Message, phrase) {
					t.Errorf("notice %+v, want %s", n, tc.want[i])
				}
			}
		})
	}
}

func TestLoopback(t *testing.T) {
	for ip, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "::ffff:127.0.0.1": true,
		"0.0.0.0": false, "::": false, "10.0.0.5": false, "fe80::1": false, "": false, "localhost": false,
	} {
		if got := Loopback(ip); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", ip, got, want)
		}
	}
}
