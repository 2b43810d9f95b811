package plugins_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/plugins"
)

// FuzzCheckImageRef: CheckImageRef never panics, accepts only the forms
// Ironic's image services take (http(s) with a host, file:/// paths,
// glance references and ids), and its error never carries the password
// of a URL it was given.
func FuzzCheckImageRef(f *testing.F) {
	for _, s := range []string{
		"http://images.example/a.iso", "https://u:pw@images.example/a.iso?x=1", "file:///srv/a.iso",
		"glance://7b0b8a8e-3c4f-4f0e-8d8e-0a1b2c3d4e5f", "7b0b8a8e-3c4f-4f0e-8d8e-0a1b2c3d4e5f",
		"", " ", "a.iso", "http:///a", "file://host/a", "ftp://u:secretpw@h/a", "%zz", "HTTP://X/",
		"http://[::1]:80/a", "http://:80/a", "glance:", "file:a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		err := plugins.CheckImageRef(ref)
		u, perr := url.Parse(strings.TrimSpace(ref))
		if err != nil {
			if perr == nil && u.User != nil {
				if pw, ok := u.User.Password(); ok && len(pw) >= 4 && strings.Contains(err.Error(), pw) {
					t.Fatalf("error %q carries the URL's password", err)
				}
			}
			return
		}
		if perr != nil {
			return // a Glance id: url.Parse need not like it
		}
		switch strings.ToLower(u.Scheme) {
		case "http", "https":
			if u.Hostname() == "" {
				t.Fatalf("accepted %q: %s URL without a host", ref, u.Scheme)
			}
		case "file":
			if !strings.HasPrefix(u.Path, "/") {
				t.Fatalf("accepted %q: file URL without an absolute path", ref)
			}
		case "glance", "":
		default:
			t.Fatalf("accepted %q with scheme %q", ref, u.Scheme)
		}
	})
}
