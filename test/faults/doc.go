// Package faults injects faults into running Rivet processes and checks
// that they degrade cleanly and recover: the database restarted under a
// write load, a database outage mid-upgrade and an old API paused with
// SIGSTOP (neither may unpin or finalize), the SQLite disk full, BMCs that hang or answer 500, driver
// plugins in a crash loop, htpasswd files replaced under SIGHUP. Clock
// skew between conductors is tested with the other multi-conductor faults
// in test/conductor (TestClockSkewBetweenConductors).
//
// Rules: every test runs real processes (rivet, rivet-sim, a test driver
// plugin), built once per run, on loopback ports and temporary
// directories, and kills them at cleanup; a failing test prints their
// output. What a fault needs (PostgreSQL server binaries, a tmpfs mount)
// skips locally with a reason and fails under CI=true. Timings are short
// so that the suite stays within a few minutes; assertions are about
// behaviour (what clients see, what the database holds), and timing
// assertions are lower bounds (a backoff was honoured) or generous upper
// bounds (a call did not hang), never speed.
package faults
