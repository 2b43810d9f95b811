package api

import "github.com/rivetmetal/rivet/core/version"

// SetMaxAPIForTest raises d's maximum microversion above HEAD's advertised
// one (as withMaxAPI in this package's tests), for the external tests that
// drive a real ironic-python-agent, which sends its token only from 1.62.
func SetMaxAPIForTest(d *Deps, v string) { d.testMaxAPI = version.MustParse(v) }

// WithTestMaxAPI is withMaxAPI for the external test package: the API
// serves microversions up to ver while unpinned.
func WithTestMaxAPI(ver string) func(*Deps) {
	return func(d *Deps) { d.testMaxAPI = version.MustParse(ver) }
}

// RaiseMaxAPI is WithTestMaxAPI under the name some tests use.
var RaiseMaxAPI = WithTestMaxAPI
