// Package dbsync implements `rivet dbsync`: create-schema, upgrade, version,
// unlock and online-data-migrations with ironic-dbsync's messages and exit
// codes (reference ironic.md §6), plus rotate-key (re-encrypt BMC credentials
// with the current credential key, online), so it is testable without the CLI.
//
// Rules (ARCHITECTURE §3.10, seeds/000 "ironic-dbsync upgrade"):
//   - upgrade first checks that every row's version column holds an object
//     version this release supports, and refuses (exit 2) before touching
//     the schema otherwise; an empty database passes. The check runs under
//     the migration lock.
//   - online-data-migrations runs the same check without tolerating missing
//     tables, requires the schema to be current, and refuses migrations
//     whose MinServiceVersion a live service has not reached.
//   - Exit codes: 0 done, 1 re-run (or a failure), 2 incompatible or
//     refused, 127 bad arguments. ExitCode maps an error to its code.
package dbsync
