// Package secretkey is Rivet's one rule for which keys of a JSON object
// (driver_info, instance_info, driver_internal_info) hold secrets. The API
// masks their values, the plugin SDK redacts them from logs, and the
// database encrypts them at rest, all by this rule.
//
// It lives in the SDK, which imports nothing from Rivet's core, so that
// core, db and the SDK share it; it imports only the standard library.
package secretkey
