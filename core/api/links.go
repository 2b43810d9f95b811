package api

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Links say where the absolute URLs the API writes (links, next, Location)
// point. A client's Host and X-Forwarded-* headers are not believed by
// default: reflected into links, they let anyone who can reach the API (or
// poison a cache in front of it) point another client's next page at a
// host of their choosing.
type Links struct {
	// PublicEndpoint is [api] public_endpoint, as Ironic's:
	// scheme://host[:port][/prefix], without a trailing slash. When set,
	// every link starts with it.
	PublicEndpoint string
	// TrustedProxies is [api] trusted_proxies: requests whose TCP peer is in
	// one of these networks come from a reverse proxy whose
	// X-Forwarded-Proto and X-Forwarded-Host (else Host) headers say what
	// the client used, and whose X-Forwarded-For names the client the rate
	// limit counts.
	TrustedProxies []netip.Prefix
}

// base is scheme://host[:port][/prefix] for r's links: the public
// endpoint; else, for a request a trusted proxy forwarded, what the proxy
// says the client used; else the address the request's connection
// arrived on.
func (l Links) base(r *http.Request) string {
	if l.PublicEndpoint != "" {
		return l.PublicEndpoint
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if l.trusted(r) {
		if p := firstValue(r.Header.Get("X-Forwarded-Proto")); p == "http" || p == "https" {
			scheme = p
		}
		host := firstValue(r.Header.Get("X-Forwarded-Host"))
		if !validHost(host) {
			host = r.Host
		}
		if validHost(host) {
			return scheme + "://" + host
		}
	}
	return scheme + "://" + localHost(r.Context())
}

// trusted reports whether r's TCP peer is a trusted proxy.
func (l Links) trusted(r *http.Request) bool {
	if len(l.TrustedProxies) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	return l.trustedAddr(ap.Addr())
}

// trustedAddr reports whether a is in one of the trusted proxies' networks.
func (l Links) trustedAddr(a netip.Addr) bool {
	ip := a.Unmap().WithZone("")
	for _, p := range l.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// localHost is host:port of the local end of the request's connection
// (the API's own address the client reached), or "localhost" for a
// request that did not come through a net/http server.
func localHost(ctx context.Context) string {
	a, ok := ctx.Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return "localhost"
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return "localhost"
	}
	ip := ap.Addr().Unmap()
	host := ip.WithZone("").String()
	if z := ip.Zone(); z != "" {
		host += "%25" + url.PathEscape(z) // RFC 6874
	}
	if ip.Is6() {
		host = "[" + host + "]"
	}
	return fmt.Sprintf("%s:%d", host, ap.Port())
}

// firstValue is the first of a comma-separated header's values (a chain
// of proxies appends theirs), trimmed.
func firstValue(v string) string {
	first, _, _ := strings.Cut(v, ",")
	return strings.TrimSpace(first)
}

// validHost accepts host[:port] made of the characters host names, IPv4
// and bracketed IPv6 addresses use; anything else in a forwarded header is
// ignored rather than written into a link.
func validHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(".-:[]_", c) >= 0) {
			return false
		}
	}
	return true
}
