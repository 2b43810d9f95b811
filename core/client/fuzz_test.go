package client

import (
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/version"
)

// FuzzParseErrorBody: any body gives one line, without panicking.
func FuzzParseErrorBody(f *testing.F) {
	f.Add([]byte(`{"error_message": "{\"faultstring\": \"x\"}"}`))
	f.Add([]byte(`{"error_message": "{\"description\": \"y\"}"}`))
	f.Add([]byte(`{"error_message": {"faultstring": 3}}`))
	f.Add([]byte("<html>\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		if msg := ParseErrorBody(body); strings.Contains(msg, "\n") {
			t.Fatalf("message has a newline: %q", msg)
		}
	})
}

// FuzzParseRequest: what parses as an exact version round-trips through
// its string, and only major 1 is accepted.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{"", "latest", maxV, "spam", "l33t", "1.2.3.4.5", "2.0", " 1.1 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRequest(s)
		if err != nil || r.Kind != Exact {
			return
		}
		if r.Version.Major != 1 {
			t.Fatalf("accepted major %d from %q", r.Version.Major, s)
		}
		if back, err := version.Parse(r.String()); err != nil || back != r.Version {
			t.Fatalf("%q does not round-trip: %v", s, err)
		}
	})
}
