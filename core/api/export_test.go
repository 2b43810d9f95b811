package api

import "github.com/rivetmetal/rivet/core/version"

// WithTestMaxAPI is withMaxAPI for the external test package (api_test):
// it serves microversions up to ver above HEAD's advertised maximum.
func WithTestMaxAPI(ver string) func(*Deps) {
	return func(d *Deps) { d.testMaxAPI = version.MustParse(ver) }
}
