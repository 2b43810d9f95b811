package config

import (
	"strings"
	"testing"
)

func TestPublicEndpoint(t *testing.T) {
	tests := map[string]struct {
		in, want string
		ok       bool
	}{
		"host":          {"https://bm.example.com", "https://bm.example.com", true},
		"port, prefix":  {"http://10.0.0.1:6385/baremetal/", "http://10.0.0.1:6385/baremetal", true},
		"IPv6":          {"http://[2001:db8::1]:6385", "http://[2001:db8::1]:6385", true},
		"no scheme":     {"bm.example.com", "", false},
		"ftp":           {"ftp://bm.example.com", "", false},
		"credentials":   {"https://u:p@bm.example.com", "", false},
		"query":         {"https://bm.example.com/?a=1", "", false},
		"fragment":      {"https://bm.example.com/#x", "", false},
		"no host":       {"https:///x", "", false},
		"port, no host": {"https://:6385", "", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := PublicEndpoint(tc.in)
			if (err == nil) != tc.ok || got != tc.want {
				t.Errorf("PublicEndpoint(%q) = %q, %v", tc.in, got, err)
			}
		})
	}
}

func TestTrustedProxies(t *testing.T) {
	got, err := TrustedProxies([]string{"10.0.0.0/8", "192.0.2.1", "2001:db8::/32", "10.1.2.3/8"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.0/8", "192.0.2.1/32", "2001:db8::/32", "10.0.0.0/8"}
	for i, p := range got {
		if p.String() != want[i] {
			t.Errorf("item %d = %s, want %s", i, p, want[i])
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "example.com", ""} {
		if _, err := TrustedProxies([]string{bad}); err == nil {
			t.Errorf("TrustedProxies(%q) took it", bad)
		}
	}
}

// TestLinkOptionsStopStart: a bad public_endpoint or trusted_proxies value
// stops the service at load, naming the option.
func TestLinkOptionsStopStart(t *testing.T) {
	for opt, val := range map[string]string{"public_endpoint": "bm.example.com", "trusted_proxies": "10.0.0.0/8,nope"} {
		_, err := Load(nil, []string{"RIVET_API_" + strings.ToUpper(opt) + "=" + val})
		if err == nil || !strings.Contains(err.Error(), "[api] "+opt) {
			t.Errorf("%s = %q: %v", opt, val, err)
		}
	}
}
