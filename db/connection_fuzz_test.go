package db

import (
	"strings"
	"testing"
)

// FuzzMaskConnection: masking and parsing never panic, and a password in
// the user info never survives masking or a parse error.
func FuzzMaskConnection(f *testing.F) {
	for _, s := range []string{"s3cret", "p@ss/w@rd", "a%zzb", "", "::", "x?y#z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pass string) {
		raw := "postgresql://u:" + pass + "@h:5432/d"
		masked := MaskConnection(raw)
		_, err := parseConnection(raw)
		if strings.ContainsAny(pass, "?#") || len(pass) < minScrubLen || strings.Contains("postgresql://u:***@h:5432/d", pass) {
			return // not a password by URL grammar, or too short to look for
		}
		if strings.Contains(masked, pass) {
			t.Errorf("MaskConnection(%q) = %q keeps the password", raw, masked)
		}
		if err != nil && strings.Contains(err.Error(), pass) {
			t.Errorf("parse error %q keeps the password", err)
		}
	})
}
