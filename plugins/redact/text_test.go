package redact

import (
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		// URLs: every scheme, user and password both hidden.
		"http":              {"http://admin:pw@bmc", "http://***:***@bmc"},
		"https with path":   {"https://admin:pw@10.0.0.1/redfish/v1", "https://***:***@10.0.0.1/redfish/v1"},
		"redfish+https":     {"redfish+https://u:p@host:8443/x", "redfish+https://***:***@host:8443/x"},
		"redfish+http":      {"redfish+http://u:p@host", "redfish+http://***:***@host"},
		"ftp":               {"ftp://anon:mail@ftp.example.org/pub", "ftp://***:***@ftp.example.org/pub"},
		"ipv6 host":         {"http://u:p@[fe80::1]:443/x", "http://***:***@[fe80::1]:443/x"},
		"ipv6 zone":         {"http://u:p@[fe80::1%25eth0]/x", "http://***:***@[fe80::1%25eth0]/x"},
		"user only":         {"http://u@h", "http://***@h"},
		"token as user":     {"https://ghp_abc123@git.example/repo", "https://***@git.example/repo"},
		"empty password":    {"http://u:@h/", "http://***:***@h/"},
		"empty user":        {"http://:p@h/", "http://***:***@h/"},
		"empty userinfo":    {"http://@h/", "http://@h/"},
		"percent-encoded":   {"http://u:p%40ss%3Aw@h/img", "http://***:***@h/img"},
		"raw @ in password": {"http://u:p@ss@h/img", "http://***:***@h/img"},
		"raw : in password": {"http://u:p:a:ss@h", "http://***:***@h"},
		"e-mail user":       {"http://me@corp.example:pw@h", "http://***:***@h"},
		"raw / in password": {"http://u:pa/ss@h/img", "http://***:***@h/img"},
		"raw ? in password": {"http://u:pa?ss@h", "http://***:***@h"},
		"raw # in password": {"http://u:pa#ss@h", "http://***:***@h"},
		"raw / in user":     {"http://u/s:p@h/x", "http://***:***@h/x"},
		"query and fragment": {
			"http://u:p@h/x?a=1#f", "http://***:***@h/x?a=1#f"},
		"file with host": {"file://u:p@nas/share/img", "file://***:***@nas/share/img"},
		"uppercase":      {"HTTPS://U:P@H", "HTTPS://***:***@H"},
		"no scheme name": {"://u:p@h", "://***:***@h"},
		// URLs inside text, as Go's net/http and the drivers write them.
		"net/http error": {
			`redfish: Get "https://admin:***@10.0.0.1/redfish/v1": dial tcp 10.0.0.1:443: connect: connection refused`,
			`redfish: Get "https://***:***@10.0.0.1/redfish/v1": dial tcp 10.0.0.1:443: connect: connection refused`},
		"two URLs": {
			"from http://a:b@x to https://c:d@y done", "from http://***:***@x to https://***:***@y done"},
		"in parentheses":  {"(see http://u:p@h)", "(see http://***:***@h)"},
		"in single quote": {"image 'http://u:p@h/i' failed", "image 'http://***:***@h/i' failed"},
		"in angle":        {"<http://u:p@h>", "<http://***:***@h>"},
		"after newline":   {"a\nhttp://u:p@h\nb", "a\nhttp://***:***@h\nb"},
		// Query strings and key=value pairs.
		"query secrets": {
			"https://h/img?password=x&token=y&size=2", "https://h/img?password=***&token=***&size=2"},
		"key=value text":   {"ipmitool -U admin password=hunter2 port=623", "ipmitool -U admin password=*** port=623"},
		"key = value":      {"password = hunter2 ok", "password = *** ok"},
		"quoted value":     {`password="hunter 2" ok`, `password="***" ok`},
		"prefixed key":     {"ipmi_password=abc", "ipmi_password=***"},
		"mixed case key":   {"Redfish_PASSWORD=abc", "Redfish_PASSWORD=***"},
		"json pair":        {`{"redfish_password": "hunter2", "user": "admin"}`, `{"redfish_password": "***", "user": "admin"}`},
		"python dict pair": {`{'auth_token': 'abc', 'x': 1}`, `{'auth_token': '***', 'x': 1}`},
		"escaped json":     {`body {\"Password\": \"hunter2\"}`, `body {\"Password\": \"***\"}`},
		"json number":      {`{"secret": 1234, "a": 1}`, `{"secret": ***, "a": 1}`},
		"unclosed quote":   {`password="hunter2`, `password="***`},
		// Left as they are.
		"e-mail":             {"contact admin@example.com", "contact admin@example.com"},
		"mailto":             {"mailto:admin@example.com", "mailto:admin@example.com"},
		"user@host ssh":      {"ssh root@10.0.0.1", "ssh root@10.0.0.1"},
		"plain URL":          {"https://10.0.0.1:443/redfish/v1", "https://10.0.0.1:443/redfish/v1"},
		"file path":          {"file:///var/lib/rivet/img@v2.qcow2", "file:///var/lib/rivet/img@v2.qcow2"},
		"@ in path":          {"https://mirror/img@sha256:abc", "https://mirror/img@sha256:abc"},
		"user with raw /":    {"http://us/er@h", "http://us/er@h"},
		"host:port":          {"dial tcp 10.0.0.1:623: i/o timeout", "dial tcp 10.0.0.1:623: i/o timeout"},
		"not a secret key":   {"ipmi_username=admin size=3", "ipmi_username=admin size=3"},
		"bare key":           {"key=abc", "key=abc"},
		"quoted phrase":      {`"bad password": refused`, `"bad password": refused`},
		"unquoted colon key": {"password: hunter2", "password: hunter2"},
		"empty value":        {"password=&a=1", "password=&a=1"},
		"space after =":      {"password= x", "password= ***"},
		"empty":              {"", ""},
		"no separator":       {"admin", "admin"},
		"non-ASCII":          {"Größe=3 ümlaut://ä:ö@ü", "Größe=3 ümlaut://***:***@ü"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Text(tc.in); got != tc.want {
				t.Errorf("Text(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestTextPortAndAtInPath records the shapes masked though they hold no
// credential: a ':' (a port, an IPv6 host) and then an '@' in the path.
// They cannot be told from a password cut short by a raw '/', so they are
// masked.
func TestTextPortAndAtInPath(t *testing.T) {
	for in, want := range map[string]string{
		"https://mirror:5000/img@sha256:abc": "https://***:***@sha256:abc",
		"http://u:1234/x@h/":                 "http://***:***@h/",
		"http://[::1]:80/a@b":                "http://***:***@b",
		"http://u:p@h/a@b":                   "http://***:***@b",
		"http://h/a:b@c":                     "http://***:***@c",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTextReturnsInputWhenClean(t *testing.T) {
	in := "https://10.0.0.1/redfish/v1"
	if got := Text(in); got != in {
		t.Fatalf("got %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = Text(in) }); n != 0 {
		t.Errorf("Text of a clean string allocates %v times", n)
	}
}

// BenchmarkText is Text on the strings every answer and log line passes
// through: a plain value, a URL without credentials, one with, and a
// driver's error quoting a URL.
//
//	go test -run '^$' -bench Text -benchmem ./plugins/redact
func BenchmarkText(b *testing.B) {
	for name, s := range map[string]string{
		"plain":             "x86_64",
		"clean-url":         "https://10.0.0.1:443/redfish/v1/Systems/1",
		"url-creds":         "https://admin:password@10.0.0.1:443/redfish/v1/Systems/1",
		"64KiB-of-schemes":  strings.Repeat("a://b", 13108),
		"64KiB-word-at-end": strings.Repeat("a://b:", 10923) + "@h",
		"error": `Driver redfish failed to set power state to power on: redfish: Get "https://admin:***@10.0.0.1/redfish/v1": ` +
			"dial tcp 10.0.0.1:443: connect: connection refused",
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Text(s)
			}
		})
	}
}

// TestTextNetHTTPError checks what Go's net/http actually writes when a
// request to a URL with credentials fails: url.Error shows the user name
// and "***" for the password (Go's own redaction), and Text hides the user
// name too.
func TestTextNetHTTPError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: the dial is refused
	_, err = http.Get("http://bmcadmin:HttpPw77@" + addr + "/redfish/v1")
	if err == nil {
		t.Fatal("GET to a closed port succeeded")
	}
	raw := err.Error()
	if !strings.Contains(raw, "bmcadmin:***@") || strings.Contains(raw, "HttpPw77") {
		t.Logf("net/http's own redaction changed: %s", raw)
	}
	got := Text(raw)
	if strings.Contains(got, "bmcadmin") || strings.Contains(got, "HttpPw77") || !strings.Contains(got, "http://***:***@"+addr+"/redfish/v1") {
		t.Errorf("Text(%q) = %q", raw, got)
	}
}
