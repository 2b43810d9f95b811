// Package conductor is the rivet conductor service: registration and
// heartbeat, node leases (the task manager), the conductor RPC API every
// rivet api calls (core/rpc ConductorAPI is its contract), the takeover of
// nodes from dead conductors, power-state sync wiring, the iPXE script
// server for network-boot deploys (bootserver) and graceful shutdown.
//
// Rules (ARCHITECTURE §5, reference/ironic.md §5):
//   - Every write to a node happens under its lease, taken with bounded
//     retries (node_locked_retry_attempts/interval) and renewed every
//     lease_duration/3 while work runs; saves are fenced by the lease epoch
//     (db.Store.SaveFenced), so a conductor whose lease was taken over can
//     never overwrite the new holder's work. Reads never take a lease.
//   - Long work (power, deploy, tear down, clean, inspect, verify, adopt) is
//     validated and its state change saved before the RPC returns; it then
//     runs on the shared worker pool (core/conductor/workers) under the
//     lease. No free worker is NoFreeConductorWorker (503) with no state
//     change. Work in a transient state always holds the lease, so a node
//     in such a state without a lease is orphaned.
//   - A conductor never declares itself dead and never takes over its own
//     leases: takeover is for leases whose holder is not a live conductor
//     (or whose lease expired), and only for nodes the hash ring over live
//     conductors maps here.
//   - On shutdown: new RPCs get TemporaryFailure (503), the conductor goes
//     offline so the ring moves, in-flight work gets
//     graceful_shutdown_timeout, then leases are released.
//   - Driver errors reach last_error naming the driver, the BMC and the
//     operation, never a secret from driver_info.
package conductor
