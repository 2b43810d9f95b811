package config

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

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
	MaxPatchOperations         int
	BodyTimeout                time.Duration
	MaxConnections             int
	PublicEndpoint             string
	TrustedProxies             []string
	HTTPBasicProjectsFile      string
	ProjectAdminCanManageOwn   bool
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
		strOpt("http_basic_projects_file", "", func(c *Config) *string { return &c.API.HTTPBasicProjectsFile },
			"With [DEFAULT] auth_strategy = http_basic, a file giving users a project and a role, "+
				"one user:project:role line each (project * for the system scope; role admin, member "+
				"or reader): a project-scoped user sees and acts only on the nodes whose owner or "+
				"lessee is its project, with Ironic's default rules per role (docs/admin/security.md). "+
				"Users the file does not list have the system scope as admin. Re-read on SIGHUP (a "+
				"file that fails to load keeps the previous one). Empty: no projects, every user is "+
				"unrestricted. Rivet's own option (Ironic takes projects and roles from Keystone)."),
		boolOpt("project_admin_can_manage_own_nodes", true, func(c *Config) *bool { return &c.API.ProjectAdminCanManageOwn },
			"Let a project-scoped admin create nodes, which its project then owns, and delete the "+
				"nodes its project owns (Ironic's option of the same name)."),
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
				"429 with Retry-After. 0 disables rate limiting. The address is the TCP peer's, or "+
				"for a trusted_proxies peer the client X-Forwarded-For names: behind a proxy not "+
				"listed there every client shares the proxy's, so list it or limit there.").atLeast(0),
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
		intOpt("max_patch_operations", 500, func(c *Config) *int { return &c.API.MaxPatchOperations },
			"Most operations one JSON-patch (PATCH) body may hold; more get HTTP 400 naming this "+
				"option. Ironic has no such cap; clients send one operation per changed field.").atLeast(1),
		durOpt("body_timeout", 60*time.Second, func(c *Config) *time.Duration { return &c.API.BodyTimeout },
			"Longest time a client may take to send a request body once its headers have arrived; "+
				"a slower body gets HTTP 408 and its connection is closed. The default lets a "+
				"max_request_body_size body arrive at 17 KiB/s.").atLeast(int64(time.Second)),
		intOpt("max_connections", 1024, func(c *Config) *int { return &c.API.MaxConnections },
			"Most client connections the REST API holds open at once, idle keep-alive ones "+
				"included (they close after 120 s); further clients wait for one to close. It "+
				"bounds what many slow or idle connections can cost in memory. 0 means no cap.").atLeast(0),
		strOpt("public_endpoint", "", func(c *Config) *string { return &c.API.PublicEndpoint },
			"Public URL of the REST API, scheme://host[:port][/prefix] (for example "+
				"https://baremetal.example.com or https://example.com/baremetal), from which links, "+
				"next and Location are built. Empty builds them from the address the client's "+
				"connection reached (or, from a trusted_proxies peer, from its X-Forwarded-Proto and "+
				"X-Forwarded-Host); the request's own Host header is never used. Set it behind a "+
				"reverse proxy or NAT.").check(checkPublicEndpoint),
		listOpt("trusted_proxies", []string{}, func(c *Config) *[]string { return &c.API.TrustedProxies },
			"Reverse proxies (CIDR networks or addresses) whose X-Forwarded-Proto and "+
				"X-Forwarded-Host headers (else Host) say the URL clients used, for links when "+
				"public_endpoint is empty, and whose X-Forwarded-For says which client rate_limit "+
				"counts. Requests from any other peer have these headers ignored.").
			check(checkTrustedProxies),
	}}
}

// PublicEndpoint checks an [api] public_endpoint value and returns it
// without a trailing slash: an http or https URL with a host, an optional
// port and path, and nothing else.
func PublicEndpoint(s string) (string, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "", errors.New("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", errors.New("the scheme must be http or https")
	case u.Hostname() == "":
		return "", errors.New("the URL has no host")
	case u.User != nil:
		return "", errors.New("the URL must not hold credentials")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", errors.New("the URL must not have a query or a fragment")
	}
	return strings.TrimRight(s, "/"), nil
}

// TrustedProxies reads [api] trusted_proxies: CIDR networks or single
// addresses.
func TrustedProxies(items []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, it := range items {
		if p, err := netip.ParsePrefix(it); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(it)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a CIDR network nor an IP address", it)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

func checkPublicEndpoint(v any) string {
	if s := v.(string); s != "" {
		if _, err := PublicEndpoint(s); err != nil {
			return fmt.Sprintf("%q: %v; want scheme://host[:port][/prefix]", s, err)
		}
	}
	return ""
}

func checkTrustedProxies(v any) string {
	if _, err := TrustedProxies(v.([]string)); err != nil {
		return err.Error()
	}
	return ""
}
