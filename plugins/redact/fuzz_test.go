package redact

import (
	"strings"
	"testing"
)

// FuzzText checks that Text never panics and that the password of a
// "scheme://user:pass@host" URL, wherever it sits in a text, never comes
// out. Shapes Text documents as not recognised are skipped: a password
// holding whitespace or a quote (not one word), a user name holding an
// unencoded '/', '?' or '#' when the password holds one too, and a password
// that also occurs elsewhere in the text or holds the '*' of Hidden.
func FuzzText(f *testing.F) {
	for _, s := range [][6]string{
		{"", "http", "admin", "pw", "bmc", ""},
		{`redfish: Get "`, "https", "admin", "hunter22", "10.0.0.1/redfish/v1", `": dial tcp`},
		{"", "redfish+https", "u", "p@ss", "[fe80::1]:443/x", ""},
		{"image ", "ftp", "anon", "p%40ss", "mirror/img?password=x&token=y", " failed"},
		{"", "http", "me@corp", "pa/ss:w", "h", ""},
		{`{"password": `, "http", "u", "p,x}", "h", "}"},
		{"x://a:", "file", "", "sec#ret", "nas/share", ""},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5])
	}
	f.Fuzz(func(t *testing.T, prefix, scheme, user, pass, host, suffix string) {
		in := prefix + scheme + "://" + user + ":" + pass + "@" + host + suffix
		out := Text(in) // never panics, whatever in is
		if !validScheme(scheme) || pass == "" || strings.ContainsAny(pass, " \t\n\r\v\f\"'`<>*") ||
			strings.ContainsAny(user, " \t\n\r\v\f\"'`<>") ||
			strings.ContainsAny(user, "/?#") && strings.ContainsAny(pass, "/?#") ||
			strings.Count(in, pass) != 1 {
			return
		}
		if strings.Contains(out, pass) {
			t.Fatalf("Text(%q) = %q: the password %q shows", in, out, pass)
		}
	})
}

func validScheme(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(isKeyChar(c) && c != '_' || c == '+') {
			return false
		}
	}
	return true
}
