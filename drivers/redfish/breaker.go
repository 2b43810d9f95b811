package redfish

import (
	"fmt"
	"sync"
	"time"
)

// breaker is one BMC's circuit breaker. Closed, it counts consecutive
// failures; at the threshold it opens and every call fails fast for the
// cooldown, so a dead BMC does not hold a worker per call for a whole
// timeout. Then it lets exactly one probe through (half-open): success
// closes it, failure opens it again for twice as long, up to 16 cooldowns.
type breaker struct {
	threshold int
	cooldown  time.Duration
	now       func() time.Time

	mu       sync.Mutex
	failures int
	openFor  time.Duration // current cooldown; 0 when closed
	until    time.Time     // open until then
	probing  bool          // a half-open probe is in flight
	last     string        // the last failure, for the fast-fail message
}

func newBreaker(threshold int, cooldown time.Duration, now func() time.Time) *breaker {
	return &breaker{threshold: threshold, cooldown: cooldown, now: now}
}

// allow reports whether a call may go to the BMC; when it may not, the
// error says why and when the next probe goes. A true answer obliges the
// caller to report the outcome with done.
func (b *breaker) allow() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.openFor == 0 {
		return nil
	}
	now := b.now()
	if now.Before(b.until) {
		return fmt.Errorf("%d consecutive failures, next probe in %s; last: %s",
			b.failures, b.until.Sub(now).Round(time.Millisecond), b.last)
	}
	if b.probing {
		return fmt.Errorf("%d consecutive failures, a probe is in flight; last: %s", b.failures, b.last)
	}
	b.probing = true
	return nil
}

// done records a call's outcome. Only BMC failures (no answer, 5xx) count;
// a call that got any other answer proves the BMC alive.
func (b *breaker) done(f failure, msg string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	wasProbe := b.probing
	b.probing = false
	if f != failBMC && f != failNoAnswer {
		if f != failCaller && f != failQueue {
			b.failures, b.openFor = 0, 0
		}
		return
	}
	b.failures++
	b.last = msg
	switch {
	case wasProbe:
		b.openFor = min(2*b.openFor, 16*b.cooldown)
	case b.failures >= b.threshold && b.openFor == 0:
		b.openFor = b.cooldown
	default:
		return
	}
	b.until = b.now().Add(b.openFor)
}

// open reports whether the breaker is failing calls fast now.
func (b *breaker) open() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.openFor != 0 && b.now().Before(b.until)
}
