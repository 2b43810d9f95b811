package config

import (
	"errors"
	"fmt"
	"net"
)

// Service names a Rivet server for the checks that depend on what it
// listens on: an API-only host never opens the JSON-RPC port, a stand-alone
// conductor never opens the REST port, an all-in-one process (and dev)
// opens the REST port and calls its conductor in process.
type Service string

// The servers whose listeners ValidateService checks.
const (
	ServiceAPI       Service = "api"
	ServiceConductor Service = "conductor"
	ServiceAllInOne  Service = "all-in-one"
)

// Services lists every Service, in the order `rivet config check` checks them.
var Services = []Service{ServiceAPI, ServiceConductor, ServiceAllInOne}

// Loopback reports whether hostIP (an [api] or [json_rpc] host_ip) only
// listens on the host's loopback interface: 127.0.0.0/8 or ::1. The
// unspecified addresses 0.0.0.0 and :: listen on every interface, so they
// are not loopback.
func Loopback(hostIP string) bool {
	ip := net.ParseIP(hostIP)
	return ip != nil && ip.IsLoopback()
}

// ValidateService checks what s would expose with c, on top of Validate:
// nothing that reads node data or acts on nodes may listen off loopback
// without authentication unless explicitly allowed. Each problem is an
// *Error naming the option and the options that would fix it.
func (c *Config) ValidateService(s Service) error {
	var errs []error
	if s == ServiceAPI || s == ServiceAllInOne {
		errs = append(errs, c.apiExposure())
	}
	if s == ServiceConductor && c.Default.RPCTransport == "json-rpc" {
		errs = append(errs, c.jsonRPCExposure())
	}
	return errors.Join(errs...)
}

// apiExposure refuses a REST API without authentication on a non-loopback
// address unless [api] allow_unauthenticated_remote says something in front
// of it authenticates.
func (c *Config) apiExposure() error {
	if c.Default.AuthStrategy != "noauth" || Loopback(c.API.HostIP) || c.API.AllowUnauthenticatedRemote {
		return nil
	}
	return optionError("", opt("api", "host_ip"), fmt.Sprintf(
		"%s is not a loopback address and [DEFAULT] auth_strategy is noauth: anyone who reaches port %d "+
			"could read and change every node without credentials. Set [DEFAULT] auth_strategy = http_basic "+
			"with [DEFAULT] http_basic_auth_user_file (an htpasswd file), or [api] host_ip = 127.0.0.1 to "+
			"serve this host only (for instance behind a reverse proxy on it), or, only when a proxy in front "+
			"of the API authenticates every request, [api] allow_unauthenticated_remote = true",
		c.API.HostIP, c.API.Port))
}

// jsonRPCExposure refuses a conductor JSON-RPC listener without
// authentication on a non-loopback address: it has no override, since
// JSON-RPC skips the REST API's checks and answers with node secrets.
func (c *Config) jsonRPCExposure() error {
	if c.JSONRPCAuthStrategy() != "noauth" || Loopback(c.JSONRPC.HostIP) || c.MutualTLS() {
		return nil
	}
	from := "[json_rpc] auth_strategy is noauth"
	if c.JSONRPC.AuthStrategy == "" {
		from = "[json_rpc] auth_strategy is unset and [DEFAULT] auth_strategy is noauth"
	}
	return optionError("", opt("json_rpc", "host_ip"), fmt.Sprintf(
		"%s is not a loopback address and %s: anyone who reaches port %d could read node "+
			"credentials and power or provision nodes, bypassing the REST API. Set [json_rpc] "+
			"auth_strategy = http_basic with [json_rpc] http_basic_auth_user_file on the conductor and "+
			"[json_rpc] username and password on the API services (and [json_rpc] use_ssl, cert_file, "+
			"key_file on the conductor with cafile on the API services, so the credentials are not sent "+
			"in clear), or mutual TLS ([json_rpc] use_ssl = true, require_client_certificate = true, "+
			"cafile, cert_file and key_file on every service; `rivet tls init` makes a CA), or "+
			"[json_rpc] host_ip = 127.0.0.1 when the API runs on this host only",
		c.JSONRPC.HostIP, from, c.JSONRPC.Port))
}

// MutualTLS reports whether the JSON-RPC server only accepts clients with a
// certificate signed by [json_rpc] cafile.
func (c *Config) MutualTLS() bool {
	return c.JSONRPC.UseSSL && c.JSONRPC.RequireClientCert && c.JSONRPC.CAFile != ""
}

// Notice is something a service logs at start about its configuration.
type Notice struct {
	// Warn is true for a warning, false for information.
	Warn bool
	// Message says what and why, naming the options involved.
	Message string
}

// ServiceNotices are the start-up notices of s about what it exposes with
// c (which ValidateService accepted): a REST API without authentication, a
// JSON-RPC listener sending credentials in clear, a listener that only this
// host reaches.
func (c *Config) ServiceNotices(s Service) []Notice {
	var ns []Notice
	if (s == ServiceAPI || s == ServiceAllInOne) && c.Default.AuthStrategy == "noauth" {
		if Loopback(c.API.HostIP) {
			ns = append(ns, Notice{Message: fmt.Sprintf("REST API without authentication ([DEFAULT] auth_strategy = noauth), "+
				"reachable from this host only ([api] host_ip = %s)", c.API.HostIP)})
		} else {
			ns = append(ns, Notice{Warn: true, Message: fmt.Sprintf("REST API without authentication on %s "+
				"([DEFAULT] auth_strategy = noauth, [api] allow_unauthenticated_remote = true): every client that "+
				"reaches it can read and change every node; make sure a proxy in front of it authenticates", c.API.HostIP)})
		}
	}
	if s != ServiceConductor || c.Default.RPCTransport != "json-rpc" {
		return ns
	}
	switch {
	case Loopback(c.JSONRPC.HostIP):
		ns = append(ns, Notice{Message: fmt.Sprintf("JSON-RPC listens on %s (auth_strategy %s): only API services on "+
			"this host can reach this conductor; set [json_rpc] host_ip (with [json_rpc] auth_strategy = http_basic) for "+
			"API services on other hosts", c.JSONRPC.HostIP, c.JSONRPCAuthStrategy())})
	case c.JSONRPCAuthStrategy() == "http_basic" && !c.JSONRPC.UseSSL:
		ns = append(ns, Notice{Warn: true, Message: fmt.Sprintf("JSON-RPC on %s uses http_basic without TLS: "+
			"the API services' credentials and node credentials cross the network in clear; set [json_rpc] "+
			"use_ssl, cert_file and key_file (and cafile on the API services)", c.JSONRPC.HostIP)})
	}
	return ns
}
