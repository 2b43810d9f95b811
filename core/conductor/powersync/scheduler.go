package powersync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrRunning is returned by a second call to Run.
var ErrRunning = errors.New("powersync: scheduler already running")

// ErrStopped is returned by RunOnce after Stop.
var ErrStopped = errors.New("powersync: scheduler stopped")

// Deps are the scheduler's collaborators. Source, Prober and Recorder are
// required.
type Deps struct {
	Source   Source
	Prober   Prober
	Recorder Recorder
	// Runner is the shared worker pool probes run on; nil runs each probe
	// on its own goroutine, bounded by Config.Workers alone.
	Runner Runner
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// Scheduler runs power-state sync cycles. Create it with New; it is safe
// for concurrent use, and Run may be called once.
type Scheduler struct {
	cfg Config
	d   Deps
	log *slog.Logger

	// cycle is a one-slot semaphore held for a whole cycle, so cycles
	// never overlap; the fields below it are touched only while held.
	cycle chan struct{}
	// bmcs remembers the BMCs whose state matters to the next cycle: an
	// open or counting breaker, or an abandoned probe still running. A
	// BMC in neither is left out, so a conductor whose BMCs all answer
	// keeps nothing per BMC between cycles.
	bmcs     map[bmcID]*bmcState
	gen      uint64         // counts cycles, to find the bmcs no longer listed
	failures map[string]int // node UUID → consecutive failed probes

	mu          sync.Mutex // guards the fields below
	started     bool
	stopped     bool
	stopAdmit   context.CancelFunc
	cancelProbe context.CancelFunc
	done        chan struct{}
}

// bmcState is what the scheduler remembers about a BMC between cycles.
type bmcState struct {
	breaker breaker
	// hung is set while a probe abandoned at its deadline is still
	// running; the BMC gets no other probe until it returns.
	hung atomic.Bool
	gen  uint64 // the last cycle that listed the BMC
}

// remember keeps q's BMC state for the next cycles if it matters to them,
// and forgets it otherwise.
func (s *Scheduler) remember(c *cycle, q *bmcQueue) {
	st := q.state
	if st.breaker != (breaker{}) || st.hung.Load() {
		st.gen = s.gen
		// A copy of the key, which shares a chunk of the listing (an
		// assignment stores its key even when one is there).
		id := c.id(q)
		s.bmcs[bmcID{bmc: strings.Clone(id.bmc), node: strings.Clone(id.node)}] = st
		return
	}
	// Dropped: the next probe of the BMC, if any, starts a fresh one, so
	// a cycle holds a state only while the BMC is probed.
	q.state = nil
	if len(s.bmcs) > 0 {
		delete(s.bmcs, c.id(q))
	}
}

// New returns a scheduler, or the problems with cfg and d.
func New(cfg Config, d Deps) (*Scheduler, error) {
	errs := []error{cfg.Validate()}
	if d.Source == nil || d.Prober == nil || d.Recorder == nil {
		errs = append(errs, errors.New("powersync: Source, Prober and Recorder are required"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if d.Runner == nil {
		d.Runner = goRunner{}
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Scheduler{
		cfg: cfg, d: d, log: log,
		cycle:    make(chan struct{}, 1),
		bmcs:     map[bmcID]*bmcState{},
		failures: map[string]int{},
	}, nil
}

// Run runs a cycle every Interval until Stop is called (then it returns
// nil) or ctx ends (then running probes are cancelled and it returns
// ctx.Err()). It returns only after every probe it started has returned or
// been abandoned. With Interval 0 it runs no cycle and just waits.
func (s *Scheduler) Run(ctx context.Context) error {
	probeCtx, cancelProbe := context.WithCancel(ctx)
	admitCtx, stopAdmit := context.WithCancel(probeCtx)
	defer cancelProbe()
	defer stopAdmit()
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return ErrRunning
	}
	s.started = true
	if s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopAdmit, s.cancelProbe, s.done = stopAdmit, cancelProbe, make(chan struct{})
	done := s.done
	s.mu.Unlock()
	defer close(done)

	timer := time.NewTimer(0)
	defer timer.Stop()
	if s.cfg.Interval == 0 {
		s.log.Info("power-state sync disabled (interval 0)")
		timer.Stop()
	}
	for {
		select {
		case <-admitCtx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		start := time.Now()
		st, err := s.runCycle(probeCtx, admitCtx)
		switch {
		case err != nil && admitCtx.Err() != nil: // stopping
		case err != nil:
			s.log.Error("power-state sync cycle failed", "error", err)
		default:
			s.log.Info("power-state sync cycle done", "stats", st)
		}
		wait := time.Until(start.Add(s.cfg.Interval))
		if wait < 0 && admitCtx.Err() == nil {
			s.log.Warn("power-state sync cycle overran its interval; starting the next at once",
				"interval", s.cfg.Interval, "duration", st.Duration, "bound", st.Bound, "workers", st.Workers)
			wait = 0
		}
		timer.Reset(max(wait, 0))
	}
}

// Stop makes Run start no more probes and waits for the running ones until
// ctx ends; then it cancels them and returns ctx.Err(). Stop before Run
// makes Run return at once. A Prober that ignores cancellation may still be
// running when Stop returns.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.mu.Lock()
	s.stopped = true
	stopAdmit, cancelProbe, done := s.stopAdmit, s.cancelProbe, s.done
	s.mu.Unlock()
	if done == nil {
		return nil
	}
	stopAdmit()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		cancelProbe()
		return ctx.Err()
	}
}

// RunOnce runs one cycle now, after any cycle in progress, and returns its
// stats. Cancelling ctx stops it like cancelling Run's context.
func (s *Scheduler) RunOnce(ctx context.Context) (Stats, error) {
	s.mu.Lock()
	stopped := s.stopped
	s.mu.Unlock()
	if stopped {
		return Stats{}, ErrStopped
	}
	return s.runCycle(ctx, ctx)
}

// runCycle runs one cycle once no other is running. Probes run under
// probeCtx; no probe starts after admitCtx ends.
func (s *Scheduler) runCycle(probeCtx, admitCtx context.Context) (Stats, error) {
	select {
	case s.cycle <- struct{}{}:
	case <-admitCtx.Done():
		return Stats{}, admitCtx.Err()
	}
	defer func() { <-s.cycle }()
	start := time.Now()
	var l listing
	if err := s.d.Source.Nodes(admitCtx, l.add); err != nil {
		return Stats{Started: start}, fmt.Errorf("powersync: list nodes: %w", err)
	}
	l.seal()
	c := s.newCycle(start, &l)
	c.dispatch(probeCtx, admitCtx)
	st := c.finish()
	s.d.Recorder.CycleDone(probeCtx, st)
	return st, nil
}
