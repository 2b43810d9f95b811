package powersync

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// abandonGrace is how long past its deadline a probe may take to return
// before the worker gives up on it. It absorbs the scheduling delay of a
// Prober that does honour its context.
const abandonGrace = time.Second

// ErrTimeout wraps the error of a probe that reached CallTimeout.
var ErrTimeout = errors.New("power-state probe deadline exceeded")

// ErrNoState is the error of a probe whose Prober returned no error and an
// empty state.
var ErrNoState = errors.New("BMC returned an empty power state")

// result is what a worker hands back to the dispatcher.
type result struct {
	node      Node
	q         int32 // the node's queue in the cycle; set by the dispatcher's closure
	latency   time.Duration
	err       error // the probe failed
	cancelled bool  // cut short by shutdown; neither success nor failure
	changed   bool
	recordErr error
}

// probe asks n's BMC for its power state and tells the Recorder what it
// learnt. prevFailures is n's consecutive failure count before this probe.
func (s *Scheduler) probe(ctx context.Context, n Node, st *bmcState, prevFailures int) result {
	start := time.Now()
	state, err := s.call(ctx, n, st)
	r := result{node: n, latency: time.Since(start)}
	if err != nil && ctx.Err() != nil {
		r.cancelled = true
		return r
	}
	if err == nil && state == "" {
		err = ErrNoState
	}
	if err != nil {
		r.err = fmt.Errorf("node %s: get power state: %w", n.UUID, err)
		s.d.Recorder.ProbeFailed(ctx, n, r.err, prevFailures+1)
		return r
	}
	if prevFailures > 0 {
		s.d.Recorder.ProbeRecovered(ctx, n, prevFailures)
	}
	if state != n.PowerState {
		r.changed = true
		if err := s.d.Recorder.PowerChanged(ctx, n, state); err != nil {
			r.recordErr = err
			s.log.Warn("recording an out-of-band power state change failed; retrying next cycle",
				"node", n.UUID, "node_name", n.Name, "recorded", n.PowerState, "observed", state, "error", err)
		}
	}
	return r
}

// call runs the Prober under CallTimeout. If the Prober has not returned
// abandonGrace after the deadline, call returns ErrTimeout and leaves it
// running with st.hung set, so the worker is freed but the BMC gets no
// second probe until the first returns.
func (s *Scheduler) call(ctx context.Context, n Node, st *bmcState) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	type answer struct {
		state string
		err   error
	}
	out := make(chan answer, 1)
	const running, answered, abandoned = 0, 1, 2
	var phase atomic.Int32
	go func() {
		state, err := s.d.Prober.GetPowerState(ctx, n)
		out <- answer{state, err}
		if !phase.CompareAndSwap(running, answered) {
			st.hung.Store(false)
		}
	}()
	timedOut := func(err error) error {
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%w after %v: %w", ErrTimeout, s.cfg.CallTimeout, err)
		}
		return err
	}

	select {
	case a := <-out:
		return a.state, timedOut(a.err)
	case <-ctx.Done():
	}
	grace := time.NewTimer(abandonGrace)
	defer grace.Stop()
	select {
	case a := <-out:
		return a.state, timedOut(a.err)
	case <-grace.C:
	}
	st.hung.Store(true)
	if !phase.CompareAndSwap(running, abandoned) {
		st.hung.Store(false) // it answered in the meantime
		a := <-out
		return a.state, timedOut(a.err)
	}
	s.log.Warn("power-state probe ignored its deadline; abandoned it, its BMC gets no probe until it returns",
		"node", n.UUID, "bmc", n.BMC, "timeout", s.cfg.CallTimeout)
	return "", fmt.Errorf("%w after %v (the driver did not return; abandoned)", ErrTimeout, s.cfg.CallTimeout)
}
