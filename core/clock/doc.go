// Package clock is the process's wall clock for the timestamps Rivet
// stamps itself (created_at, updated_at, provision_updated_at, …), with a
// skew that only tests set.
//
// Rules:
//   - Whatever two hosts must agree on (lease expiry, heartbeats and
//     liveness, the takeover of a dead conductor's nodes, callback
//     timeouts) is computed from the database's clock (db.DB.Now), never
//     from this one: hosts' clocks drift.
//   - RIVET_TEST_CLOCK_SKEW (a Go duration, e.g. "-90s"), read once at
//     start, shifts Now by that much. It exists so that fault tests can run
//     conductors whose clocks disagree and show that nothing in the first
//     rule depends on them; it is logged when set and never belongs in
//     production.
//   - Durations measured within one process (time.Since of a local start)
//     use package time directly: a skew shifts both ends alike.
package clock
