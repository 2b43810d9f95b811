// Package version holds the (major, minor) version type used for object
// versions, RPC API versions and REST API microversions.
//
// Rules: a version is written "M.N" with decimal digits only, no sign, no
// leading zeros ("0" itself is fine) and no third component. Parsing is strict
// so that a typo in a config file or a header is an error, never a guess.
// Compatibility follows oslo: a requested version is served by an
// implementation with the same major and a minor at least as high.
package version
