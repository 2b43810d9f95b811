// Package traits knows which names are traits, as Ironic's API checks
// them (its TRAITS_SCHEMA): a standard name of os-traits, or a custom one,
// CUSTOM_ followed by upper-case letters, digits and underscores; at most
// 255 characters. Node traits (API 1.37), deploy template names (1.55) and
// runbook names (1.92) are such names.
//
// The standard names are generated from Debian's python3-os-traits (see
// gen_standard.py); regenerate them when Rivet follows a newer os-traits.
package traits

//go:generate /usr/bin/python3 gen_standard.py

import (
	"regexp"
	"slices"

	"github.com/rivetmetal/rivet/core/pyrepr"
)

// MaxLength is the longest a trait name may be.
const MaxLength = 255

// CustomPattern is the pattern of a custom trait, as Ironic writes it in
// its messages.
const CustomPattern = "^CUSTOM_[A-Z0-9_]+$"

var custom = regexp.MustCompile(CustomPattern)

// IsStandard reports whether name is a standard os-traits name.
func IsStandard(name string) bool {
	_, found := slices.BinarySearch(standard, name)
	return found
}

// Valid reports whether name is a trait name.
func Valid(name string) bool {
	msg, _ := Problem(name)
	return msg == ""
}

// Problem says what is wrong with name, in the words of the jsonschema
// check Ironic runs: msg is the error, cause the "possible root cause"
// Ironic appends (empty when it adds none). A valid name has no problem.
func Problem(name string) (msg, cause string) {
	switch {
	case name == "":
		return pyrepr.String(name) + " should be non-empty", ""
	case len([]rune(name)) > MaxLength:
		return pyrepr.String(name) + " is too long", ""
	case custom.MatchString(name) || IsStandard(name):
		return "", ""
	}
	return pyrepr.String(name) + " is not valid under any of the given schemas",
		pyrepr.String(name) + " does not match '" + CustomPattern + "'"
}
