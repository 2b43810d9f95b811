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

// WaitError is a wait that ended without reaching its target.
type WaitError struct {
	// Node is the node waited on.
	Node string
	// Target is the provision state waited for.
	Target string
	// State is the last provision state seen.
	State string
	// LastError is the node's last_error, if any.
	LastError string
	// Err is ErrWaitTimeout for a timeout; nil for a failure state.
	Err error
}

// Error names the node, what happened and the node's last_error.
func (e *WaitError) Error() string {
	var b strings.Builder
	if e.Err != nil {
		fmt.Fprintf(&b, "node %s: %v waiting for provision state %q (still %q)", e.Node, e.Err, e.Target, e.State)
	} else {
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
	if o.Timeout <= 0 {
		o.Timeout = DefaultWaitTimeout
	}
	if o.Interval <= 0 {
		o.Interval = DefaultWaitInterval
	}
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
