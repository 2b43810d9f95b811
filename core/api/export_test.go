package api

import "github.com/rivetmetal/rivet/core/version"

// RaiseMaxAPI is withMaxAPI for the external tests (package api_test):
// the stack serves microversions up to ver while unpinned.
func RaiseMaxAPI(ver string) func(*Deps) {
	return func(d *Deps) { d.testMaxAPI = version.MustParse(ver) }
}
