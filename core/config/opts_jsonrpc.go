package config

import "time"

// JSONRPCOpts holds the [json_rpc] section. Each field is declared, with its
// default, rules and help, in jsonRPCSection.
type JSONRPCOpts struct {
	HostIP                string
	Port                  int
	AuthStrategy          string
	HTTPBasicAuthUserFile string
	Username              string
	Password              string
	UseSSL                bool
	CertFile              string
	KeyFile               string
	CAFile                string
	RequireClientCert     bool
	Timeout               time.Duration
	MaxRequestBodySize    int
	MaxHeaderSize         int
	BodyTimeout           time.Duration
}

func jsonRPCSection() section {
	return section{name: "json_rpc", help: "Options of the JSON-RPC transport between the API and conductors " +
		"([DEFAULT] rpc_transport = json-rpc).", options: []*Option{
		strOpt("host_ip", "127.0.0.1", func(c *Config) *string { return &c.JSONRPC.HostIP },
			"IP address on which the conductor's JSON-RPC server listens; 0.0.0.0 or :: listen on "+
				"every address. The default serves API services on this host only (Ironic's is ::). "+
				"A non-loopback address needs auth_strategy = http_basic (the conductor refuses to "+
				"start otherwise), and use_ssl so credentials do not cross the network in clear. "+
				"The API service also reads this option: it reaches a conductor registered under its "+
				"own [DEFAULT] host at this address (its loopback counterpart when 0.0.0.0 or ::), "+
				"since that conductor runs on the same host, and at the name only if nothing "+
				"listens there.").check(checkIP),
		intOpt("port", 8089, func(c *Config) *int { return &c.JSONRPC.Port },
			"TCP port on which the conductor's JSON-RPC server listens. A conductor whose port "+
				"is not 8089 registers itself as host:port.").between(1, 65535),
		strOpt("auth_strategy", "", func(c *Config) *string { return &c.JSONRPC.AuthStrategy },
			"Authentication strategy of JSON-RPC, on the server and the client side.").
			choices(append([]Choice{{"", "use [DEFAULT] auth_strategy"}}, authChoices...)...),
		strOpt("http_basic_auth_user_file", "/etc/rivet/htpasswd-json-rpc", func(c *Config) *string { return &c.JSONRPC.HTTPBasicAuthUserFile },
			"Path to the Apache htpasswd file the JSON-RPC server checks when its auth "+
				"strategy is http_basic. The file is re-read on SIGHUP (a file that fails to "+
				"load is logged and the users loaded before stay); a new path needs a restart."),
		strOpt("username", "", func(c *Config) *string { return &c.JSONRPC.Username },
			"User name the JSON-RPC client sends when the auth strategy is http_basic."),
		strOpt("password", "", func(c *Config) *string { return &c.JSONRPC.Password },
			"Password the JSON-RPC client sends when the auth strategy is http_basic.").secret(),
		boolOpt("use_ssl", false, func(c *Config) *bool { return &c.JSONRPC.UseSSL },
			"Use TLS for JSON-RPC: the server serves cert_file and key_file, the client "+
				"connects with https and verifies the server against cafile."),
		strOpt("cert_file", "", func(c *Config) *string { return &c.JSONRPC.CertFile },
			"PEM certificate (chain) of the JSON-RPC server; required when use_ssl is true. The "+
				"client presents it, with key_file, to a server that asks for a client certificate "+
				"(require_client_certificate), so it must then also allow client authentication "+
				"(`rivet tls issue` makes such certificates)."),
		strOpt("key_file", "", func(c *Config) *string { return &c.JSONRPC.KeyFile },
			"PEM private key of cert_file; required when use_ssl is true."),
		strOpt("cafile", "", func(c *Config) *string { return &c.JSONRPC.CAFile },
			"PEM CA bundle the JSON-RPC client verifies servers with, and the server verifies "+
				"client certificates with when require_client_certificate is true. Empty uses the "+
				"system trust store (on the client side only)."),
		boolOpt("require_client_certificate", false, func(c *Config) *bool { return &c.JSONRPC.RequireClientCert },
			"Mutual TLS: the JSON-RPC server accepts only clients presenting a certificate signed "+
				"by cafile (the API services present their cert_file). Needs use_ssl and cafile. It "+
				"authenticates the callers, so a conductor may then listen off loopback with "+
				"auth_strategy = noauth; `rivet tls init` and `rivet tls issue` make a deployment CA "+
				"and its certificates."),
		durOpt("timeout", 120*time.Second, func(c *Config) *time.Duration { return &c.JSONRPC.Timeout },
			"Time the JSON-RPC client waits for a response.").atLeast(int64(time.Second)),
		intOpt("max_request_body_size", 4<<20, func(c *Config) *int { return &c.JSONRPC.MaxRequestBodySize },
			"Largest request body the JSON-RPC server accepts, in bytes.").atLeast(1024),
		intOpt("max_header_size", 64<<10, func(c *Config) *int { return &c.JSONRPC.MaxHeaderSize },
			"Largest request line plus headers the JSON-RPC server reads, in bytes; larger "+
				"requests get HTTP 431.").atLeast(4096),
		durOpt("body_timeout", 60*time.Second, func(c *Config) *time.Duration { return &c.JSONRPC.BodyTimeout },
			"Longest time a client may take to send a JSON-RPC request body once its headers "+
				"have arrived; a slower body is refused and its connection closed.").atLeast(int64(time.Second)),
	}}
}
