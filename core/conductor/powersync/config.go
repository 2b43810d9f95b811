package powersync

import (
	"errors"
	"fmt"
	"time"
)

// Config tunes a Scheduler. Start from DefaultConfig.
type Config struct {
	// Interval is the time between the starts of two cycles (Ironic's
	// [conductor]sync_power_state_interval). 0 disables power-state sync.
	// A cycle that overruns it is followed at once by the next.
	Interval time.Duration
	// Spread is the window at the start of each cycle over which the
	// probes are spread: a node's probe becomes due at a fixed offset in
	// [0, Spread) derived from its UUID. 0 makes every probe due at once
	// (bounded by Workers). Must be less than Interval.
	Spread time.Duration
	// Workers bounds the probes in flight at once (Ironic's
	// sync_power_state_workers). The shared pool may bound them further.
	Workers int
	// CallTimeout is the deadline of one probe.
	CallTimeout time.Duration
	// Breaker configures the per-BMC circuit breaker.
	Breaker BreakerConfig
}

// BreakerConfig configures the per-BMC circuit breaker.
type BreakerConfig struct {
	// Threshold is the number of consecutive failed probes of a BMC that
	// opens its breaker. 0 disables the breaker.
	Threshold int
	// Backoff is how long a breaker first stays open; each failed
	// half-open probe doubles it.
	Backoff time.Duration
	// MaxBackoff caps the doubling.
	MaxBackoff time.Duration
}

// DefaultConfig follows Ironic's defaults (120 s interval, 8 workers) and
// spreads each cycle's probes over its first half.
func DefaultConfig() Config {
	return Config{
		Interval:    120 * time.Second,
		Spread:      60 * time.Second,
		Workers:     8,
		CallTimeout: 30 * time.Second,
		Breaker: BreakerConfig{
			Threshold:  3,
			Backoff:    5 * time.Minute,
			MaxBackoff: time.Hour,
		},
	}
}

// Validate reports every problem with c. A disabled scheduler (Interval 0)
// still needs valid Workers and CallTimeout, since RunOnce uses them.
func (c Config) Validate() error {
	var errs []error
	bad := func(field string, v any, why string) {
		errs = append(errs, fmt.Errorf("powersync: %s %v: %s", field, v, why))
	}
	if c.Interval < 0 {
		bad("Interval", c.Interval, "must not be negative (0 disables)")
	}
	if c.Spread < 0 {
		bad("Spread", c.Spread, "must not be negative")
	}
	if c.Interval > 0 && c.Spread >= c.Interval {
		bad("Spread", c.Spread, fmt.Sprintf("must be less than Interval %v", c.Interval))
	}
	if c.Workers < 1 {
		bad("Workers", c.Workers, "must be at least 1")
	}
	if c.CallTimeout <= 0 {
		bad("CallTimeout", c.CallTimeout, "must be positive")
	}
	if b := c.Breaker; b.Threshold < 0 {
		bad("Breaker.Threshold", b.Threshold, "must not be negative (0 disables)")
	} else if b.Threshold > 0 {
		if b.Backoff <= 0 {
			bad("Breaker.Backoff", b.Backoff, "must be positive")
		}
		if b.MaxBackoff < b.Backoff {
			bad("Breaker.MaxBackoff", b.MaxBackoff, fmt.Sprintf("must be at least Backoff %v", b.Backoff))
		}
	}
	return errors.Join(errs...)
}
