package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrWaitTimeout is wrapped by the error of a wait that ran out of time.
var ErrWaitTimeout = errors.New("timed out")

// Defaults of WaitOptions.
const (
	DefaultWaitInterval = 2 * time.Second
	DefaultWaitTimeout  = 30 * time.Minute
)

// WaitOptions say what to wait for and how.
type WaitOptions struct {
	// Target is the provision state to reach ("active", "available", …).
	Target string
	// Timeout bounds the wait; DefaultWaitTimeout when zero.
	Timeout time.Duration
	// Interval is the pause between polls; DefaultWaitInterval when zero.
	Interval time.Duration
	// OnPoll, if not nil, sees every poll's states (for progress output).
	OnPoll func(states Resource)
}

// withDefaults is o with DefaultWaitTimeout and DefaultWaitInterval where
// Timeout and Interval are not positive.
func (o WaitOptions) withDefaults() WaitOptions {
	if o.Timeout <= 0 {
		o.Timeout = DefaultWaitTimeout
	}
	if o.Interval <= 0 {
		o.Interval = DefaultWaitInterval
	}
	return o
}

// WaitError is a wait that ended without reaching its target.
type WaitError struct {
	// Node is the node waited on.
	Node string
	// Target is the provision state waited for, or the power state when
	// Power is set.
	Target string
	// State is the last provision (or power) state seen.
	State string
	// LastError is the node's last_error, if any.
	LastError string
	// Err is ErrWaitTimeout for a timeout; nil for a failure state.
	Err error
	// Power is set for a wait for a power state (WaitForPowerState).
	Power bool
}

// Error names the node, what happened and the node's last_error.
func (e *WaitError) Error() string {
	var b strings.Builder
	what := "provision state"
	if e.Power {
		what = "power state"
	}
	switch {
	case e.Err != nil:
		fmt.Fprintf(&b, "node %s: %v waiting for %s %q (still %q)", e.Node, e.Err, what, e.Target, e.State)
	case e.Power:
		fmt.Fprintf(&b, "node %s: the power change failed, still %q instead of %q", e.Node, e.State, e.Target)
	default:
		fmt.Fprintf(&b, "node %s: reached %q instead of %q", e.Node, e.State, e.Target)
	}
	if e.LastError != "" {
		b.WriteString(": " + e.LastError)
	}
	return b.String()
}

// Unwrap returns ErrWaitTimeout for a timeout.
func (e *WaitError) Unwrap() error { return e.Err }

// IsFailureState reports whether a provision state is a failure Ironic
// leaves a node in: "error" and every "… failed".
func IsFailureState(s string) bool {
	return s == "error" || strings.HasSuffix(s, " failed")
}

// WaitForProvisionState polls the node's states until provision_state is
// the target, a failure state, or a stable state other than the target once
// the node has moved (e.g. back to enroll after a failed verify). It
// returns the last states seen; on failure or timeout the error is a
// *WaitError carrying last_error.
func (c *Client) WaitForProvisionState(ctx context.Context, node string, o WaitOptions) (Resource, error) {
	o = o.withDefaults()
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var last Resource
	first := ""
	for {
		st, err := c.States(ctx, node)
		if err != nil {
			if parent.Err() == nil && ctx.Err() != nil {
				return last, c.waitTimeout(node, o.Target, last)
			}
			return last, err
		}
		last = st
		if o.OnPoll != nil {
			o.OnPoll(st)
		}
		state := st.String("provision_state")
		if first == "" {
			first = state
		}
		switch {
		case state == o.Target && st.String("target_provision_state") == "":
			return st, nil
		case IsFailureState(state) && !IsFailureState(o.Target),
			state != first && st.String("target_provision_state") == "" && state != o.Target:
			return st, &WaitError{Node: node, Target: o.Target, State: state, LastError: st.String("last_error")}
		}
		t := time.NewTimer(o.Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			if parent.Err() != nil {
				return last, parent.Err()
			}
			return last, c.waitTimeout(node, o.Target, last)
		case <-t.C:
		}
	}
}

func (c *Client) waitTimeout(node, target string, last Resource) error {
	return &WaitError{Node: node, Target: target, State: last.String("provision_state"),
		LastError: last.String("last_error"), Err: ErrWaitTimeout}
}

// PowerReached is the power state a power request ends in: "power on"
// after power on and the reboots, "power off" after the power offs.
func PowerReached(target string) string {
	if target == PowerOff || target == SoftPowerOff {
		return PowerOff
	}
	return PowerOn
}

// WaitForPowerState polls the node's states until its power state is
// o.Target (PowerReached of the request) with no power change pending.
// A change the conductor gave up on (target_power_state cleared, the power
// still elsewhere, last_error set) is a *WaitError carrying last_error; a
// timeout is a *WaitError wrapping ErrWaitTimeout. OnPoll sees every poll.
func (c *Client) WaitForPowerState(ctx context.Context, node string, o WaitOptions) (Resource, error) {
	o = o.withDefaults()
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var last Resource
	timeout := func() error {
		return &WaitError{Node: node, Target: o.Target, State: last.String("power_state"), LastError: last.String("last_error"), Err: ErrWaitTimeout, Power: true}
	}
	// The request was accepted before the first poll, so a poll that finds
	// no change pending and last_error set means the change failed.
	for {
		st, err := c.States(ctx, node)
		if err != nil {
			if parent.Err() == nil && ctx.Err() != nil {
				return last, timeout()
			}
			return last, err
		}
		last = st
		if o.OnPoll != nil {
			o.OnPoll(st)
		}
		pending := st.String("target_power_state") != ""
		switch {
		case !pending && st.String("power_state") == o.Target:
			return st, nil
		case !pending && st.String("last_error") != "":
			return st, &WaitError{Node: node, Target: o.Target, State: st.String("power_state"), LastError: st.String("last_error"), Power: true}
		}
		t := time.NewTimer(o.Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			if parent.Err() != nil {
				return last, parent.Err()
			}
			return last, timeout()
		case <-t.C:
		}
	}
}
