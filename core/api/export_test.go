package api

import "github.com/rivetmetal/rivet/core/version"

// WithTestMaxAPI is withMaxAPI for the external test package: the API
// serves microversions up to ver while unpinned.
func WithTestMaxAPI(ver string) func(*Deps) {
	return func(d *Deps) { d.testMaxAPI = version.MustParse(ver) }
}

// RaiseMaxAPI is WithTestMaxAPI under the name some tests use.
var RaiseMaxAPI = WithTestMaxAPI
