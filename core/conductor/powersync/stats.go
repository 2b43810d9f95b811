package powersync

import (
	"log/slog"
	"time"
)

// Stats describes one cycle.
type Stats struct {
	Started  time.Time
	Duration time.Duration
	// Nodes is how many distinct nodes the Source listed.
	Nodes int
	// BMCs is how many distinct BMC keys those nodes have.
	BMCs int
	// Probed counts probes that completed, successfully or not.
	Probed int
	// Changed counts probes that found a power state different from the
	// recorded one (out-of-band changes).
	Changed int
	// Failed counts probes that failed: an error, a timeout, an empty state.
	Failed int
	// Skipped counts nodes not probed, by reason.
	Skipped Skipped
	// Unstarted counts nodes left unprobed because the scheduler stopped.
	Unstarted int
	// Cancelled counts probes cut short by a hard stop.
	Cancelled int
	// RecordErrors counts PowerChanged calls that returned an error.
	RecordErrors int
	// Workers is the concurrency bound in effect: Config.Workers, or fewer
	// when fewer BMCs had work.
	Workers int
	// Busy is the sum of the probes' latencies.
	Busy time.Duration
	// Bound is the shortest this cycle could have been with its probes'
	// latencies: max(Busy / Workers, the busiest BMC's serial time), i.e.
	// N × latency / concurrency. Spread makes a cycle deliberately longer.
	Bound time.Duration
}

// Skipped counts nodes not probed in a cycle, by reason.
type Skipped struct {
	Maintenance int
	Locked      int
	// Breaker counts nodes whose BMC's breaker was open.
	Breaker int
	// Busy counts nodes whose BMC still runs an abandoned probe.
	Busy int
	// Duplicate counts repeated UUIDs in the Source's list.
	Duplicate int
}

// Total is the number of skipped nodes.
func (s Skipped) Total() int {
	return s.Maintenance + s.Locked + s.Breaker + s.Busy + s.Duplicate
}

// Ratio is Duration / Bound: 1 is a perfectly packed cycle. It is 0 when
// nothing was probed.
func (s Stats) Ratio() float64 {
	if s.Bound <= 0 {
		return 0
	}
	return float64(s.Duration) / float64(s.Bound)
}

// LogValue makes a Stats log as a compact group.
func (s Stats) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Duration("duration", s.Duration),
		slog.Int("nodes", s.Nodes),
		slog.Int("probed", s.Probed),
		slog.Int("changed", s.Changed),
		slog.Int("failed", s.Failed),
		slog.Int("skipped", s.Skipped.Total()),
		slog.Int("skipped_breaker", s.Skipped.Breaker),
		slog.Int("unstarted", s.Unstarted),
		slog.Int("workers", s.Workers),
		slog.Duration("bound", s.Bound),
		slog.Float64("ratio", s.Ratio()),
	)
}
