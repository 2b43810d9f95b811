// Package release holds Rivet's one release table and pin resolution.
//
// The table maps each supported release (a semver key and a name) to the
// highest REST API microversion, the conductor RPC API version, every object
// version the release may write, and its service version. A HEAD entry
// describes the code as it is. Tests elsewhere enforce that HEAD matches the
// code (RPC version, registered object versions, API max).
//
// Rules (seeds/000_…, ARCHITECTURE §3.8):
//   - Releases are ordered oldest first; API, RPC and service versions never go
//     backwards; an object's versions form one contiguous run across the table.
//   - Cutting a release copies HEAD to a new semver key and name.
//   - [DEFAULT] pin_release_version is "" (latest), a semver key or name, or
//     "auto" (the oldest release among the services that count); anything else is a
//     startup error that lists the valid values.
package release
