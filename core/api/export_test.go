package api

import "github.com/rivetmetal/rivet/core/version"

// SetTestMaxAPI is withMaxAPI for the external test package: the API
// serves microversions up to ver while unpinned.
func SetTestMaxAPI(d *Deps, ver string) { d.testMaxAPI = version.MustParse(ver) }
