package powersync

import "context"

// Node is what the scheduler needs to know about one node.
type Node struct {
	UUID string
	// Name is the node's name, for logs ("" when it has none).
	Name string
	// BMC identifies the node's BMC: address:port, or an identity the
	// driver provides. Nodes with the same BMC are probed one at a time.
	// Empty means the node shares its BMC with no other node.
	BMC string
	// PowerState is the power state as recorded ("power on", …).
	PowerState string
	// Maintenance nodes are skipped.
	Maintenance bool
	// Locked nodes (a task holds them) are skipped this cycle.
	Locked bool
}

// Source lists the nodes this conductor owns and should sync.
type Source interface {
	// Nodes calls add with each node, in a stable order (a repeated UUID
	// keeps its first listing). add copies what it keeps of n.
	Nodes(ctx context.Context, add func(n Node)) error
}

// Prober asks a node's BMC for its power state through the node's driver.
// It must return when ctx ends; one that does not is abandoned.
type Prober interface {
	GetPowerState(ctx context.Context, n Node) (string, error)
}

// Recorder persists what the scheduler learns. Its methods are called from
// worker goroutines, concurrently for different nodes, and should be quick:
// a worker is held while they run.
type Recorder interface {
	// PowerChanged is called when the BMC reports observed and it differs
	// from n.PowerState: an out-of-band change. The conductor records it
	// (power_state and an event). An error is logged and counted; the
	// next cycle sees the old state again and retries.
	PowerChanged(ctx context.Context, n Node, observed string) error
	// ProbeFailed is called after each failed probe with the node's
	// consecutive failure count (1, 2, …), so the conductor can set
	// last_error or maintenance after Ironic's
	// power_state_sync_max_retries.
	ProbeFailed(ctx context.Context, n Node, err error, consecutive int)
	// ProbeRecovered is called on the first successful probe after
	// failures, so the conductor can clear what ProbeFailed set.
	ProbeRecovered(ctx context.Context, n Node, failures int)
	// CycleDone is called at the end of every cycle.
	CycleDone(ctx context.Context, s Stats)
}

// Runner starts a function on a worker, waiting for one until ctx ends.
// *workers.Pool implements it; fn must not be started after ctx has ended.
type Runner interface {
	Periodic(ctx context.Context, fn func()) error
}

// goRunner is the Runner used without a shared pool: Workers alone bounds
// concurrency.
type goRunner struct{}

func (goRunner) Periodic(ctx context.Context, fn func()) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	go fn()
	return nil
}
