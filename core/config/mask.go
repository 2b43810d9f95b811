package config

import (
	"fmt"
	"net"
	"strings"
)

// mask replaces a secret value wherever it would be shown.
const mask = "******"

// maskURL hides the password of a connection URL, both the userinfo form
// (scheme://user:password@host/db, or user:password@tcp(host)/db) and a
// password= query parameter. When in doubt it hides more, never less.
func maskURL(s string) string {
	_, rest, found := strings.Cut(s, "://")
	prefix := s[:len(s)-len(rest)]
	if !found {
		prefix, rest = "", s
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if user, _, ok := strings.Cut(rest[:at], ":"); ok {
			rest = user + ":" + mask + rest[at:]
		}
	}
	return prefix + maskQueryPasswords(rest)
}

// maskQueryPasswords hides the values of password-like query parameters.
func maskQueryPasswords(s string) string {
	q := strings.IndexByte(s, '?')
	if q < 0 {
		return s
	}
	params := strings.Split(s[q+1:], "&")
	for i, p := range params {
		k, _, ok := strings.Cut(p, "=")
		switch strings.ToLower(k) {
		case "password", "passwd", "pwd":
			if ok {
				params[i] = k + "=" + mask
			}
		}
	}
	return s[:q+1] + strings.Join(params, "&")
}

// connectionSchemes are the database URL schemes Rivet speaks; a "+driver"
// suffix (mysql+pymysql, as Ironic writes them) is accepted and ignored.
var connectionSchemes = []string{"sqlite", "postgresql", "postgres", "mysql"}

func checkConnection(v any) string {
	s := v.(string)
	scheme, _, ok := strings.Cut(s, "://")
	base, _, _ := strings.Cut(strings.ToLower(scheme), "+")
	for _, known := range connectionSchemes {
		if ok && base == known {
			return ""
		}
	}
	return fmt.Sprintf("%q is not a supported database URL: use sqlite:///…, postgresql://… or mysql://…", maskURL(s))
}

// checkIP requires a literal IPv4 or IPv6 address, as oslo's IPOpt does.
func checkIP(v any) string {
	if net.ParseIP(v.(string)) == nil {
		return fmt.Sprintf("%q is not an IP address", v)
	}
	return ""
}

// checkHostName requires [DEFAULT] host to be usable as the host of a URL:
// the APIs dial a conductor at http://<host>:<port>/, so a space or any
// other character a host name cannot hold would fail every call to it.
func checkHostName(v any) string {
	s := v.(string)
	if s == "" || net.ParseIP(strings.Trim(s, "[]")) != nil {
		return ""
	}
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '-' || r == '.' || r == '_' {
			continue
		}
		return fmt.Sprintf("%q is not a host name: %q is not allowed; use a name (letters, digits, \"-\", \".\", \"_\") "+
			"or an IP address, with any comment on a line of its own", s, r)
	}
	return ""
}
