// Package secretkey is Rivet's one rule for which keys of a JSON object
// (driver_info, instance_info, driver_internal_info, extra, …) hold
// secrets. The API, the logs and last_error mask their values (package
// redact), and the database encrypts driver_info's at rest, all by this
// rule.
//
// It lives in the SDK, which imports nothing from Rivet's core, so that
// core, db and the SDK share it; it imports only the standard library.
package secretkey
