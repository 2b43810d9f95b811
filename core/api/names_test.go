package api

import (
	"regexp"
	"testing"
)

// uuidForm is the UUID form isUUID checks, as Ironic writes it.
var uuidForm = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func FuzzIsUUID(f *testing.F) {
	for _, s := range []string{"1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "1BE26C0B-03F2-4D2E-AE87-C02D7F33C123",
		"1be26c0b-03f2-4d2e-ae87-c02d7f33c12", "1be26c0b-03f2-4d2e-ae87-c02d7f33c1234", "1be26c0b03f2-4d2e-ae87-c02d7f33c1234",
		"1be26c0b-03f2-4d2e-ae87-c02d7f33c12g", "1be26c0b-03f2-4d2e-ae87-c02d7f33c12\n", "", "node-1",
		"1be26c0b-03f2-4d2e-ae87_c02d7f33c123", "ü1be26c0b-03f2-4d2e-ae87-c02d7f33c1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isUUID(s), uuidForm.MatchString(s); got != want {
			t.Fatalf("isUUID(%q) = %v, the UUID form says %v", s, got, want)
		}
	})
}
