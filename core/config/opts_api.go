package config

import "time"

// APIOpts holds the [api] section. Each field is declared, with its default,
// rules and help, in apiSection.
type APIOpts struct {
	HostIP                     string
	Port                       int
	AllowUnauthenticatedRemote bool
	MaxLimit                   int
	EnableSSLAPI               bool
	CertFile                   string
	KeyFile                    string
	TLSMinimumVersion          string
	MaxRequestBodySize         int
	MaxHeaderSize              int
	RateLimit                  int
	RateLimitBurst             int
	GracefulShutdownTimeout    time.Duration
	ShutdownDelay              time.Duration
}

func apiSection() section {
	return section{name: "api", help: "Options of the REST API service.", options: []*Option{
		strOpt("host_ip", "127.0.0.1", func(c *Config) *string { return &c.API.HostIP },
			"IP address on which the REST API listens; 0.0.0.0 or :: listen on every address. "+
				"The default serves this host only (Ironic's is 0.0.0.0): set the address clients "+
				"reach, with [DEFAULT] auth_strategy = http_basic. A non-loopback address with "+
				"auth_strategy = noauth stops the API at start unless allow_unauthenticated_remote "+
				"is true.").check(checkIP),
		intOpt("port", 6385, func(c *Config) *int { return &c.API.Port },
			"TCP port on which the REST API listens.").between(1, 65535),
		boolOpt("allow_unauthenticated_remote", false, func(c *Config) *bool { return &c.API.AllowUnauthenticatedRemote },
			"Let the REST API serve a non-loopback host_ip with [DEFAULT] auth_strategy = noauth. "+
				"Only for an API behind a proxy that authenticates every request itself; every start "+
				"then logs a warning. Rivet's own option (Ironic has none): without it such a "+
				"configuration stops the API at start."),
		intOpt("max_limit", 1000, func(c *Config) *int { return &c.API.MaxLimit },
			"Maximum number of items returned in a single response from a collection "+
				"resource; larger limit query parameters are reduced to it.").atLeast(1),
		boolOpt("enable_ssl_api", false, func(c *Config) *bool { return &c.API.EnableSSLAPI },
			"Serve the REST API over HTTPS, with cert_file and key_file."),
		strOpt("cert_file", "", func(c *Config) *string { return &c.API.CertFile },
			"PEM certificate (chain) of the REST API; required when enable_ssl_api is true."),
		strOpt("key_file", "", func(c *Config) *string { return &c.API.KeyFile },
			"PEM private key of cert_file; required when enable_ssl_api is true."),
		strOpt("tls_minimum_version", "1.2", func(c *Config) *string { return &c.API.TLSMinimumVersion },
			"Lowest TLS version the REST API accepts when enable_ssl_api is true.").
			choices(Choice{Value: "1.2"}, Choice{Value: "1.3"}),
		intOpt("max_request_body_size", 1<<20, func(c *Config) *int { return &c.API.MaxRequestBodySize },
			"Largest request body the REST API accepts, in bytes; larger requests get HTTP 413.").
			atLeast(1024),
		intOpt("max_header_size", 64<<10, func(c *Config) *int { return &c.API.MaxHeaderSize },
			"Largest request line plus headers the REST API reads, in bytes; larger requests "+
				"get HTTP 431.").atLeast(4096),
		intOpt("rate_limit", 0, func(c *Config) *int { return &c.API.RateLimit },
			"Requests per second each client IP address may make to the REST API, sustained "+
				"(a token bucket of rate_limit_burst tokens refilled at this rate); more get HTTP "+
				"429 with Retry-After. 0 disables rate limiting. The address is the TCP peer's: "+
				"behind a reverse proxy every client shares the proxy's, so limit there instead.").atLeast(0),
		intOpt("rate_limit_burst", 100, func(c *Config) *int { return &c.API.RateLimitBurst },
			"Requests a client IP address may make at once before rate_limit applies.").atLeast(1),
		durOpt("graceful_shutdown_timeout", 30*time.Second, func(c *Config) *time.Duration { return &c.API.GracefulShutdownTimeout },
			"On SIGTERM, how long the REST API waits for in-flight requests to finish "+
				"before closing their connections."),
		durOpt("shutdown_delay", 0, func(c *Config) *time.Duration { return &c.API.ShutdownDelay },
			"On SIGTERM, how long the REST API keeps serving with GET /healthz answering 503 "+
				"and keep-alive off, before it stops accepting connections and waits "+
				"graceful_shutdown_timeout for in-flight requests. Behind a load balancer set it "+
				"to at least the health-check interval times the fall count (haproxy: inter x "+
				"fall), so the balancer stops sending new requests before the listener closes; "+
				"0 closes the listener at once."),
	}}
}
