package powersync

import (
	"cmp"
	"container/heap"
	"context"
	"slices"
	"strings"
	"time"
)

// cycle is one pass over the listed nodes. Only the dispatching goroutine
// touches it; workers hand results back over the results channel.
type cycle struct {
	s        *Scheduler
	start    time.Time
	nodes    []Node     // as listed; items point into it
	queues   []bmcQueue // in BMC order
	ready    readyHeap
	results  chan result
	inflight int
	st       Stats
}

// newCycle sorts the listed nodes into per-BMC queues, counts the skipped
// ones and forgets state about nodes and BMCs no longer listed. It keeps
// a few flat slices rather than maps keyed by node: with 100,000 nodes,
// each its own BMC, per-node maps and queues were most of the conductor's
// memory.
func (s *Scheduler) newCycle(start time.Time, nodes []Node) *cycle {
	c := &cycle{
		s: s, start: start, nodes: nodes,
		results: make(chan result, s.cfg.Workers),
		st:      Stats{Started: start},
	}
	items := make([]item, len(nodes))
	for i := range nodes {
		items[i] = item{node: &nodes[i], due: offset(nodes[i].UUID, s.cfg.Spread), pos: int32(i)}
	}
	// A repeated UUID keeps its first listing. (A stable sort instead of
	// pos took a second per 100,000 nodes on a busy machine.)
	slices.SortFunc(items, func(a, b item) int {
		if c := strings.Compare(a.node.UUID, b.node.UUID); c != 0 {
			return c
		}
		return cmp.Compare(a.pos, b.pos)
	})
	items = slices.CompactFunc(items, func(a, b item) bool {
		if a.node.UUID == b.node.UUID {
			c.st.Skipped.Duplicate++
			return true
		}
		return false
	})
	c.st.Nodes = len(items)
	for uuid := range s.failures {
		if _, listed := slices.BinarySearchFunc(items, uuid, func(it item, uuid string) int {
			return strings.Compare(it.node.UUID, uuid)
		}); !listed {
			delete(s.failures, uuid)
		}
	}
	slices.SortFunc(items, func(a, b item) int {
		if c := compareIDs(idOf(a.node), idOf(b.node)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.due, b.due); c != 0 {
			return c
		}
		return strings.Compare(a.node.UUID, b.node.UUID)
	})
	// One pass over the runs of equal BMCs: the skipped nodes are counted
	// and dropped, the rest compacted in place into each BMC's queue.
	s.gen++
	runs := 0
	for i := range items {
		if i == 0 || idOf(items[i].node) != idOf(items[i-1].node) {
			runs++
		}
	}
	c.queues = make([]bmcQueue, 0, runs)
	kept := 0
	for i := 0; i < len(items); {
		id := idOf(items[i].node)
		j, first := i, kept
		for ; j < len(items) && idOf(items[j].node) == id; j++ {
			n := items[j].node
			switch {
			case n.Maintenance:
				c.st.Skipped.Maintenance++
				delete(s.failures, n.UUID) // leaving maintenance starts a fresh count
			case n.Locked:
				c.st.Skipped.Locked++
			default:
				items[kept] = items[j]
				kept++
			}
		}
		c.st.BMCs++
		st := s.bmcs[id]
		if st != nil {
			st.gen = s.gen
		}
		if kept > first {
			c.queues = append(c.queues, bmcQueue{items: items[first:kept:kept], state: st, index: -1, rank: int32(len(c.queues))})
		}
		i = j
	}
	c.ready = make(readyHeap, len(c.queues))
	for i := range c.queues {
		c.ready[i], c.queues[i].index = &c.queues[i], int32(i)
	}
	heap.Init(&c.ready)
	for id, st := range s.bmcs {
		if st.gen != s.gen && !st.hung.Load() {
			delete(s.bmcs, id)
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
			wait := time.Until(c.start.Add(c.ready[0].head().due))
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
	case q.state != nil && q.state.hung.Load():
		c.st.Skipped.Busy++
	case q.state != nil && !q.state.breaker.allow(c.s.cfg.Breaker, now):
		c.st.Skipped.Breaker++
	default:
		prev := c.s.failures[it.node.UUID]
		if q.state == nil {
			q.state = &bmcState{}
		} else if q.state.breaker.state(c.s.cfg.Breaker, now) == stateHalfOpen {
			c.s.log.Debug("BMC circuit breaker half-open: trial probe", "bmc", it.node.BMC, "node", it.node.UUID)
		}
		st := q.state
		err := c.s.d.Runner.Periodic(admitCtx, func() {
			r := c.s.probe(probeCtx, *it.node, st, prev)
			r.q = q
			c.results <- r
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
	q := r.q
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
	c.s.remember(q)
	if q.pending() {
		heap.Push(&c.ready, q)
	}
}

// finish completes the cycle's stats.
func (c *cycle) finish() Stats {
	var serial time.Duration
	active := 0
	for i := range c.queues {
		q := &c.queues[i]
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
