// Package workers is the conductor's shared worker pool: one bounded set of
// goroutines that API-driven tasks and periodic work (power-state sync,
// timeouts, takeover) draw from, with a share reserved for API-driven work.
//
// Rules (ARCHITECTURE §5; Ironic bug 2038438, where periodics and agent
// heartbeats took every conductor thread):
//   - At most Size functions run at once; periodic work holds at most
//     Size-ReservedForAPI of them, so an API task always finds a worker
//     unless API tasks themselves fill the pool.
//   - API admission never waits: TryAPI starts the task now or returns
//     ErrNoFreeWorker, which the API answers with Ironic's
//     NoFreeConductorWorker (HTTP 503). There is no queue to hide overload.
//   - Periodic admission waits for a periodic worker until its context ends.
//   - A started function's context is the caller's business (the pool runs
//     func(), not func(ctx)), so an admission deadline never cancels work
//     already running. Close stops admission and waits for running work.
package workers
