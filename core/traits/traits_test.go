package traits

import (
	"slices"
	"strings"
	"testing"
)

func TestProblem(t *testing.T) {
	for name, tc := range map[string]struct{ in, msg, cause string }{
		"custom":      {in: "CUSTOM_RAID_5"},
		"standard":    {in: "HW_CPU_X86_AVX2"},
		"lower case":  {in: "custom_x", msg: "'custom_x' is not valid under any of the given schemas", cause: "'custom_x' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		"bare prefix": {in: "CUSTOM_", msg: "'CUSTOM_' is not valid under any of the given schemas", cause: "'CUSTOM_' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		"unknown":     {in: "BAD_TRAIT", msg: "'BAD_TRAIT' is not valid under any of the given schemas", cause: "'BAD_TRAIT' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		"empty":       {in: "", msg: "'' should be non-empty"},
		"too long":    {in: "CUSTOM_" + strings.Repeat("T", 249), msg: "'CUSTOM_" + strings.Repeat("T", 249) + "' is too long"},
		"longest":     {in: "CUSTOM_" + strings.Repeat("T", 248)},
		"quote in it": {in: "it's", msg: `"it's" is not valid under any of the given schemas`, cause: `"it's" does not match '^CUSTOM_[A-Z0-9_]+$'`},
		"newline":     {in: "CUSTOM_A\n", msg: `'CUSTOM_A\n' is not valid under any of the given schemas`, cause: `'CUSTOM_A\n' does not match '^CUSTOM_[A-Z0-9_]+$'`},
	} {
		t.Run(name, func(t *testing.T) {
			msg, cause := Problem(tc.in)
			if msg != tc.msg || cause != tc.cause {
				t.Errorf("Problem(%q) = %q, %q; want %q, %q", tc.in, msg, cause, tc.msg, tc.cause)
			}
			if Valid(tc.in) != (tc.msg == "") {
				t.Errorf("Valid(%q) = %v", tc.in, Valid(tc.in))
			}
		})
	}
}

// TestStandardSorted: IsStandard searches the generated list.
func TestStandardSorted(t *testing.T) {
	if !slices.IsSorted(standard) || len(standard) < 300 {
		t.Fatalf("standard traits: %d, sorted %v", len(standard), slices.IsSorted(standard))
	}
	for _, name := range []string{"STORAGE_DISK_SSD", "COMPUTE_ARCH_X86_64", "HW_NIC_SRIOV"} {
		if !IsStandard(name) {
			t.Errorf("%s is standard", name)
		}
	}
}
