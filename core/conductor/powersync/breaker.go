package powersync

import "time"

// breakerState is the state of a BMC's circuit breaker at some instant.
type breakerState int

// Breaker states.
const (
	// stateClosed: probes go through; failures are counted.
	stateClosed breakerState = iota
	// stateOpen: the BMC failed Threshold times in a row and is skipped until
	// its backoff ends.
	stateOpen
	// stateHalfOpen: the backoff ended; the next probe decides. Per-BMC
	// concurrency 1 makes that probe the only one in flight.
	stateHalfOpen
)

// String returns the state's name as logged.
func (s breakerState) String() string {
	switch s {
	case stateClosed:
		return "closed"
	case stateOpen:
		return "open"
	case stateHalfOpen:
		return "half-open"
	}
	return "unknown"
}

// breaker is one BMC's circuit breaker. It is a pure value driven by the
// caller's clock readings, so it is tested without one.
type breaker struct {
	fails int       // consecutive failed probes
	opens int       // times opened since the last success; drives backoff
	until time.Time // end of the current open period
}

func (b *breaker) state(cfg BreakerConfig, now time.Time) breakerState {
	switch {
	case cfg.Threshold == 0 || b.fails < cfg.Threshold:
		return stateClosed
	case now.Before(b.until):
		return stateOpen
	}
	return stateHalfOpen
}

// allow reports whether a probe may go to the BMC now.
func (b *breaker) allow(cfg BreakerConfig, now time.Time) bool {
	return b.state(cfg, now) != stateOpen
}

// success closes the breaker and forgets the failures.
func (b *breaker) success() { *b = breaker{} }

// failure counts a failed probe. It reports the backoff when the failure
// opens the breaker: on reaching Threshold, or when a half-open probe fails.
func (b *breaker) failure(cfg BreakerConfig, now time.Time) (opened bool, backoff time.Duration) {
	b.fails++
	if cfg.Threshold == 0 || b.fails < cfg.Threshold {
		return false, 0
	}
	backoff = cfg.Backoff
	for i := 0; i < b.opens && backoff < cfg.MaxBackoff; i++ {
		backoff *= 2
	}
	backoff = min(backoff, cfg.MaxBackoff)
	b.opens++
	b.until = now.Add(backoff)
	return true, backoff
}
