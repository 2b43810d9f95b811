package powersync

import (
	"container/heap"
	"context"
	"time"
)

// cycle is one pass over the listed nodes. Only the dispatching goroutine
// touches it; workers hand results back over the results channel.
type cycle struct {
	s        *Scheduler
	start    time.Time
	queues   map[string]*bmcQueue
	ready    readyHeap
	results  chan result
	inflight int
	st       Stats
}

// newCycle sorts the listed nodes into per-BMC queues, counts the skipped
// ones and forgets state about nodes and BMCs no longer listed.
func (s *Scheduler) newCycle(start time.Time, nodes []Node) *cycle {
	c := &cycle{
		s: s, start: start,
		queues:  map[string]*bmcQueue{},
		results: make(chan result, s.cfg.Workers),
		st:      Stats{Started: start},
	}
	seen := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		if seen[n.UUID] {
			c.st.Skipped.Duplicate++
			continue
		}
		seen[n.UUID] = true
		key := bmcKey(n)
		q := c.queues[key]
		if q == nil {
			st := s.bmcs[key]
			if st == nil {
				st = &bmcState{}
				s.bmcs[key] = st
			}
			q = &bmcQueue{key: key, state: st, index: -1}
			c.queues[key] = q
		}
		switch {
		case n.Maintenance:
			c.st.Skipped.Maintenance++
			delete(s.failures, n.UUID) // leaving maintenance starts a fresh count
		case n.Locked:
			c.st.Skipped.Locked++
		default:
			q.items = append(q.items, item{node: n, due: start.Add(offset(n.UUID, s.cfg.Spread))})
		}
	}
	c.st.Nodes, c.st.BMCs = len(seen), len(c.queues)
	for _, q := range c.queues {
		if q.pending() {
			sortItems(q.items)
			heap.Push(&c.ready, q)
		}
	}
	for key, st := range s.bmcs {
		if c.queues[key] == nil && !st.hung.Load() {
			delete(s.bmcs, key)
		}
	}
	for uuid := range s.failures {
		if !seen[uuid] {
			delete(s.failures, uuid)
		}
	}
	return c
}

// dispatch starts probes until every queue is drained or admitCtx ends,
// then waits for the running ones.
func (c *cycle) dispatch(probeCtx, admitCtx context.Context) {
	timer := time.NewTimer(0)
	timer.Stop()
	defer timer.Stop()
	for admitCtx.Err() == nil && (c.ready.Len() > 0 || c.inflight > 0) {
		var due <-chan time.Time
		if c.ready.Len() > 0 && c.inflight < c.s.cfg.Workers {
			wait := time.Until(c.ready[0].head().due)
			if wait <= 0 {
				if !c.startNext(probeCtx, admitCtx) {
					break
				}
				continue
			}
			timer.Reset(wait)
			due = timer.C
		}
		select {
		case r := <-c.results:
			c.handle(r)
		case <-due:
		case <-admitCtx.Done():
		}
	}
	for c.inflight > 0 {
		c.handle(<-c.results)
	}
}

// startNext takes the head of the readiest BMC queue and probes or skips
// it. It reports false when the runner refused work: the cycle ends.
func (c *cycle) startNext(probeCtx, admitCtx context.Context) bool {
	q := heap.Pop(&c.ready).(*bmcQueue)
	it := q.head()
	now := time.Now()
	switch {
	case q.state.hung.Load():
		c.st.Skipped.Busy++
	case !q.state.breaker.allow(c.s.cfg.Breaker, now):
		c.st.Skipped.Breaker++
	default:
		prev := c.s.failures[it.node.UUID]
		if q.state.breaker.state(c.s.cfg.Breaker, now) == stateHalfOpen {
			c.s.log.Debug("BMC circuit breaker half-open: trial probe", "bmc", it.node.BMC, "node", it.node.UUID)
		}
		key, st := q.key, q.state
		err := c.s.d.Runner.Periodic(admitCtx, func() {
			c.results <- c.s.probe(probeCtx, it.node, key, st, prev)
		})
		if err != nil {
			if admitCtx.Err() == nil {
				c.s.log.Warn("worker pool refused a power-state probe; ending the cycle early", "error", err)
			}
			return false
		}
		q.next++
		q.inflight = true
		c.inflight++
		return true
	}
	q.next++
	if q.pending() {
		heap.Push(&c.ready, q)
	}
	return true
}

// handle applies one probe's result to the counters, the node's failure
// count and its BMC's breaker, and makes the BMC available again.
func (c *cycle) handle(r result) {
	c.inflight--
	q := c.queues[r.key]
	q.inflight = false
	q.probes++
	q.busy += r.latency
	c.st.Busy += r.latency
	cfg := c.s.cfg.Breaker
	switch {
	case r.cancelled:
		c.st.Cancelled++
	case r.err != nil:
		c.st.Probed++
		c.st.Failed++
		c.s.failures[r.node.UUID]++
		if opened, backoff := q.state.breaker.failure(cfg, time.Now()); opened {
			c.s.log.Warn("BMC circuit breaker open: skipping its nodes", "bmc", r.node.BMC,
				"node", r.node.UUID, "node_name", r.node.Name, "backoff", backoff, "error", r.err)
		}
	default:
		c.st.Probed++
		if r.changed {
			c.st.Changed++
		}
		if r.recordErr != nil {
			c.st.RecordErrors++
		}
		delete(c.s.failures, r.node.UUID)
		if q.state.breaker.state(cfg, time.Now()) != stateClosed {
			c.s.log.Info("BMC circuit breaker closed", "bmc", r.node.BMC, "node", r.node.UUID, "node_name", r.node.Name)
		}
		q.state.breaker.success()
	}
	if q.pending() {
		heap.Push(&c.ready, q)
	}
}

// finish completes the cycle's stats.
func (c *cycle) finish() Stats {
	var serial time.Duration
	active := 0
	for _, q := range c.queues {
		c.st.Unstarted += q.left()
		serial = max(serial, q.busy)
		if q.probes > 0 {
			active++
		}
	}
	c.st.Duration = time.Since(c.start)
	c.st.Workers = min(c.s.cfg.Workers, active)
	if c.st.Workers > 0 {
		c.st.Bound = max(c.st.Busy/time.Duration(c.st.Workers), serial)
	}
	return c.st
}
