package workers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Config sizes a Pool.
type Config struct {
	// Size is the number of functions that may run at once (Ironic's
	// [conductor]workers_pool_size, default 300).
	Size int
	// ReservedForAPI is how many of those periodic work may never take
	// (Ironic reserves 5%). It must leave periodic work at least one.
	ReservedForAPI int
}

// DefaultConfig mirrors Ironic: 300 workers, 5% reserved for API tasks.
func DefaultConfig() Config { return Config{Size: 300, ReservedForAPI: 15} }

// Validate reports every problem with c.
func (c Config) Validate() error {
	var errs []error
	if c.Size < 1 {
		errs = append(errs, fmt.Errorf("workers: Size %d: must be at least 1", c.Size))
	}
	if c.ReservedForAPI < 0 {
		errs = append(errs, fmt.Errorf("workers: ReservedForAPI %d: must not be negative", c.ReservedForAPI))
	}
	if c.Size >= 1 && c.ReservedForAPI >= c.Size {
		errs = append(errs, fmt.Errorf("workers: ReservedForAPI %d: must be less than Size %d so periodic work can run", c.ReservedForAPI, c.Size))
	}
	return errors.Join(errs...)
}

// Pool runs functions on a bounded number of goroutines. It is safe for
// concurrent use.
type Pool struct {
	cfg Config
	// all holds one token per running function; periodic holds one per
	// running periodic function. A periodic function takes both, so
	// periodic work can never hold the last ReservedForAPI tokens of all.
	all      chan struct{}
	periodic chan struct{}

	mu       sync.Mutex // guards isClosed and wg.Add against Close
	isClosed bool
	closed   chan struct{}
	wg       sync.WaitGroup

	api, per atomic.Int64
}

// New returns a pool sized by cfg.
func New(cfg Config) (*Pool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Pool{
		cfg:      cfg,
		all:      make(chan struct{}, cfg.Size),
		periodic: make(chan struct{}, cfg.Size-cfg.ReservedForAPI),
		closed:   make(chan struct{}),
	}, nil
}

// TryAPI starts fn on a free worker and returns at once, or returns
// ErrNoFreeWorker (or ErrClosed) without starting it. It never waits:
// an API request must not hang behind background work.
func (p *Pool) TryAPI(fn func()) error {
	select {
	case <-p.closed:
		return ErrClosed
	default:
	}
	select {
	case p.all <- struct{}{}:
	default:
		return ErrNoFreeWorker
	}
	return p.start(&p.api, fn, func() { <-p.all })
}

// Periodic waits until a worker periodic work may use is free, then starts
// fn on it and returns. It returns ctx.Err() if ctx ends first, and
// ErrClosed once the pool is closed; fn is then not started.
func (p *Pool) Periodic(ctx context.Context, fn func()) error {
	select {
	case p.periodic <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-p.closed:
		return ErrClosed
	}
	select {
	case p.all <- struct{}{}:
	case <-ctx.Done():
		<-p.periodic
		return ctx.Err()
	case <-p.closed:
		<-p.periodic
		return ErrClosed
	}
	release := func() { <-p.all; <-p.periodic }
	// Both tokens may have become free in the same instant ctx ended;
	// select picks at random, so check again rather than start late work.
	if err := ctx.Err(); err != nil {
		release()
		return err
	}
	return p.start(&p.per, fn, release)
}

func (p *Pool) start(n *atomic.Int64, fn, release func()) error {
	p.mu.Lock()
	if p.isClosed {
		p.mu.Unlock()
		release()
		return ErrClosed
	}
	p.wg.Add(1)
	p.mu.Unlock()
	n.Add(1)
	go func() {
		defer p.wg.Done()
		defer release()
		defer n.Add(-1)
		fn()
	}()
	return nil
}

// Close stops admitting work and waits until every running function has
// returned or ctx ends, whichever is first (then it returns ctx.Err() and
// the functions keep running to completion). Close may be called again.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.isClosed {
		p.isClosed = true
		close(p.closed)
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stats is a snapshot of a pool's occupancy.
type Stats struct {
	Size, ReservedForAPI int
	// API and Periodic count the functions running of each kind.
	API, Periodic int
}

// Stats returns the pool's current occupancy.
func (p *Pool) Stats() Stats {
	return Stats{
		Size: p.cfg.Size, ReservedForAPI: p.cfg.ReservedForAPI,
		API: int(p.api.Load()), Periodic: int(p.per.Load()),
	}
}
