package redfish

import (
	"testing"
	"time"
)

// TestBreaker walks the state machine with a fake clock: failures below
// the threshold and non-BMC failures keep it closed; at the threshold it
// opens; after the cooldown exactly one probe passes; a failed probe doubles
// the cooldown (capped at 16×); a good answer closes it.
func TestBreaker(t *testing.T) {
	now := time.Unix(0, 0)
	b := newBreaker(3, time.Second, func() time.Time { return now })
	step := func(what string, wantAllowed bool) {
		t.Helper()
		if got := b.allow() == nil; got != wantAllowed {
			t.Fatalf("%s: allowed %v, want %v", what, got, wantAllowed)
		}
	}
	fail := func(f failure) { step("call", true); b.done(f, "boom") }

	fail(failBMC)
	fail(failNoAnswer)
	fail(failClient) // the BMC answered: the count starts again
	fail(failBMC)
	fail(failBMC)
	fail(failCaller) // the caller gave up: neither a failure nor a success
	step("two BMC failures since the last answer", true)
	b.done(failNoAnswer, "boom")
	step("at the threshold", false)

	for i, cooldown := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 16 * time.Second} {
		now = now.Add(cooldown - time.Millisecond)
		step("within the cooldown", false)
		now = now.Add(time.Millisecond)
		step("the probe", true)
		step("a second probe while the first is in flight", false)
		if i < 5 {
			b.done(failBMC, "still down")
		}
	}
	b.done(failNone, "")
	step("closed after a good probe", true)
	b.done(failNone, "")
	if b.open() {
		t.Error("open after success")
	}
}
