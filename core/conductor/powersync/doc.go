// Package powersync is the conductor's power-state sync: a scheduler that
// asks each owned node's BMC for its power state every Interval and records
// out-of-band changes, without letting slow or dead BMCs stall the rest.
//
// It talks to the conductor only through small interfaces: Source (which
// nodes to sync), Prober (the driver's get-power-state call), Recorder (what
// to persist) and Runner (the shared worker pool, see core/conductor/workers).
// It imports nothing from db or plugins.
//
// Rules (ARCHITECTURE §5; reference/prior-art.md items 15-18, 21, 32):
//   - Cycles never overlap; within one, a node is probed at most once, so a
//     node is never synced concurrently with itself. Nodes in maintenance or
//     held by a task are skipped.
//   - At most Workers probes run at once, and at most one per BMC key, so
//     nodes behind one BMC are asked one at a time.
//   - No head-of-line blocking: a free worker takes the next node whose BMC
//     is free and whose start time has come. Each probe has a CallTimeout
//     deadline; a Prober that ignores it is abandoned shortly after (its BMC
//     stays busy until it returns), so a hung BMC holds at most one worker
//     for about CallTimeout.
//   - Jitter: each node's probe starts at a stable, hash-derived offset within
//     the first Spread of the cycle, so BMCs are not all asked at once (after
//     a restart, too) and each node is probed about every Interval.
//   - A circuit breaker per BMC key: after Threshold consecutive failures the
//     BMC is skipped for Backoff, doubling per failed trial up to MaxBackoff;
//     then one half-open probe decides whether it closes.
//   - Stop stops starting probes and waits for running ones up to its
//     context's deadline; cancelling Run's context cancels running probes.
//     A probe cut short by shutdown is neither a failure nor a change.
//   - The Recorder is called from worker goroutines, concurrently for
//     different nodes, never for one node at once.
package powersync
