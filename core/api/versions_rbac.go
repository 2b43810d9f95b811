package api

import "github.com/rivetmetal/rivet/core/version"

// The microversions of owner/lessee access control and node history.
var (
	v1_50 = version.Version{Major: 1, Minor: 50} // node owner
	v1_65 = version.Version{Major: 1, Minor: 65} // node lessee
	v1_71 = version.Version{Major: 1, Minor: 71} // scope-based roles signifier
	v1_78 = version.Version{Major: 1, Minor: 78} // node history
	v1_80 = version.Version{Major: 1, Minor: 80} // self-service node create/delete
)
