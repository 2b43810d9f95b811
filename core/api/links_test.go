package api

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// TestLinksIgnoreClientHeaders: links, next and Location are built from
// public_endpoint, else from a trusted proxy's forwarded headers, else from
// the address the connection reached; a client's own Host and
// X-Forwarded-* headers never reach them.
func TestLinksIgnoreClientHeaders(t *testing.T) {
	tests := map[string]struct {
		links  Links
		peer   string
		local  net.Addr
		header map[string]string
		want   string
	}{
		"default: the local address, not Host or X-Forwarded-*": {
			peer: "203.0.113.5:40000", local: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6385},
			header: map[string]string{"Host": "evil.example", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"},
			want:   "http://127.0.0.1:6385",
		},
		"default over IPv6": {
			peer: "[::1]:40000", local: &net.TCPAddr{IP: net.IPv6loopback, Port: 6385},
			header: map[string]string{"Host": "evil.example"}, want: "http://[::1]:6385",
		},
		"public_endpoint with a prefix": {
			links: Links{PublicEndpoint: "https://bm.example.com/baremetal"}, peer: "203.0.113.5:40000",
			local:  &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6385},
			header: map[string]string{"Host": "evil.example", "X-Forwarded-Host": "evil.example"},
			want:   "https://bm.example.com/baremetal",
		},
		"public_endpoint wins over a trusted proxy": {
			links: Links{PublicEndpoint: "https://bm.example.com", TrustedProxies: prefixes(t, "10.0.0.0/8")},
			peer:  "10.1.2.3:40000", local: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 6385},
			header: map[string]string{"X-Forwarded-Host": "other.example"}, want: "https://bm.example.com",
		},
		"trusted proxy": {
			links: Links{TrustedProxies: prefixes(t, "10.0.0.0/8")}, peer: "10.1.2.3:40000",
			local:  &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 6385},
			header: map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "api.example:8443, inner.example"},
			want:   "https://api.example:8443",
		},
		"trusted proxy without X-Forwarded-Host: its Host": {
			links: Links{TrustedProxies: prefixes(t, "10.1.2.3")}, peer: "10.1.2.3:40000",
			local:  &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 6385},
			header: map[string]string{"Host": "api.example", "X-Forwarded-Proto": "gopher"},
			want:   "http://api.example",
		},
		"trusted proxy, a malformed X-Forwarded-Host ignored": {
			links: Links{TrustedProxies: prefixes(t, "10.0.0.0/8")}, peer: "10.1.2.3:40000",
			local:  &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 6385},
			header: map[string]string{"Host": "api.example", "X-Forwarded-Host": "evil.example/x?"},
			want:   "http://api.example",
		},
		"a peer outside trusted_proxies is not believed": {
			links: Links{TrustedProxies: prefixes(t, "10.0.0.0/8")}, peer: "192.0.2.9:40000",
			local:  &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 6385},
			header: map[string]string{"Host": "evil.example", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"},
			want:   "http://10.0.0.1:6385",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, func(d *Deps) { d.Links = tc.links })
			send := func(method, path, body string) *httptest.ResponseRecorder {
				var req *http.Request
				if body == "" {
					req = httptest.NewRequest(method, "http://rivet.test"+path, nil)
				} else {
					req = httptest.NewRequest(method, "http://rivet.test"+path, strings.NewReader(body))
				}
				req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, tc.local))
				req.RemoteAddr = tc.peer
				for k, v := range tc.header {
					if k == "Host" {
						req.Host = v
					} else {
						req.Header.Set(k, v)
					}
				}
				req.Header.Set(HeaderVersion, "latest")
				rec := httptest.NewRecorder()
				e.h.ServeHTTP(rec, req)
				return rec
			}
			created := send("POST", "/v1/nodes", `{"driver":"fake-hardware"}`)
			if created.Code != http.StatusCreated {
				t.Fatalf("create: %d %s", created.Code, created.Body)
			}
			if loc := created.Header().Get("Location"); !strings.HasPrefix(loc, tc.want+"/v1/nodes/") {
				t.Errorf("Location %q, want under %s", loc, tc.want)
			}
			e.node(nil)
			list := resp{Code: 200, Body: send("GET", "/v1/nodes?limit=1", "").Body.Bytes()}.JSON(t)
			if next, _ := list["next"].(string); !strings.HasPrefix(next, tc.want+"/v1/nodes?") {
				t.Errorf("next %q, want under %s", next, tc.want)
			}
			node := list["nodes"].([]any)[0].(map[string]any)
			for _, l := range node["links"].([]any) {
				href := l.(map[string]any)["href"].(string)
				if !strings.HasPrefix(href, tc.want+"/") || strings.Contains(href, "evil") {
					t.Errorf("link %q, want under %s", href, tc.want)
				}
			}
		})
	}
}

func prefixes(t *testing.T, items ...string) []netip.Prefix {
	t.Helper()
	var out []netip.Prefix
	for _, it := range items {
		if !strings.Contains(it, "/") {
			it += "/32"
		}
		out = append(out, netip.MustParsePrefix(it))
	}
	return out
}

// TestClientIPBehindTrustedProxies: the rate limit counts the TCP peer,
// unless it is a trusted proxy: then the nearest X-Forwarded-For hop that
// is not a trusted proxy. What a client writes into X-Forwarded-For itself
// is never believed.
func TestClientIPBehindTrustedProxies(t *testing.T) {
	trusted := &Links{TrustedProxies: prefixes(t, "10.0.0.0/8")}
	tests := map[string]struct {
		links *Links
		peer  string
		xff   []string
		want  string
	}{
		"no proxies trusted":          {nil, "203.0.113.5:1", []string{"198.51.100.1"}, "203.0.113.5"},
		"untrusted peer":              {trusted, "203.0.113.5:1", []string{"198.51.100.1"}, "203.0.113.5"},
		"trusted peer, one hop":       {trusted, "10.0.0.2:1", []string{"198.51.100.1"}, "198.51.100.1"},
		"client-written hops ignored": {trusted, "10.0.0.2:1", []string{"1.2.3.4, 198.51.100.1"}, "198.51.100.1"},
		"through two trusted proxies": {trusted, "10.0.0.2:1", []string{"198.51.100.1, 10.0.0.3"}, "198.51.100.1"},
		"several header lines":        {trusted, "10.0.0.2:1", []string{"1.2.3.4", "198.51.100.1"}, "198.51.100.1"},
		"garbage hop: the peer":       {trusted, "10.0.0.2:1", []string{"1.2.3.4, nonsense"}, "10.0.0.2"},
		"no header: the peer":         {trusted, "10.0.0.2:1", nil, "10.0.0.2"},
		"only trusted hops: the peer": {trusted, "10.0.0.2:1", []string{"10.0.0.9"}, "10.0.0.2"},
		"IPv4-mapped hop":             {trusted, "10.0.0.2:1", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
		"IPv6 client":                 {trusted, "10.0.0.2:1", []string{"2001:db8::1"}, "2001:db8::1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.peer
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := clientIP(r, tc.links); got != tc.want {
				t.Errorf("clientIP = %q, want %q", got, tc.want)
			}
		})
	}
}
