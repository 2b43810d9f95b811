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
	list     *listing
	items    []item     // sorted by BMC, then due; queues are runs of it
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
func (s *Scheduler) newCycle(start time.Time, l *listing) *cycle {
	c := &cycle{
		s: s, start: start, list: l,
		results: make(chan result, s.cfg.Workers),
		st:      Stats{Started: start},
	}
	items := make([]item, l.len())
	for i := range items {
		items[i] = item{due: offset(l.uuid(int32(i)), s.cfg.Spread), idx: int32(i)}
	}
	// A repeated UUID keeps its first listing. (A stable sort instead of
	// idx took a second per 100,000 nodes on a busy machine.)
	slices.SortFunc(items, func(a, b item) int {
		if c := strings.Compare(l.uuid(a.idx), l.uuid(b.idx)); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
	items = slices.CompactFunc(items, func(a, b item) bool {
		if l.uuid(a.idx) == l.uuid(b.idx) {
			c.st.Skipped.Duplicate++
			return true
		}
		return false
	})
	c.st.Nodes = len(items)
	for uuid := range s.failures {
		if _, listed := slices.BinarySearchFunc(items, uuid, func(it item, uuid string) int {
			return strings.Compare(l.uuid(it.idx), uuid)
		}); !listed {
			delete(s.failures, uuid)
		}
	}
	slices.SortFunc(items, func(a, b item) int {
		if c := compareIDs(l.id(a.idx), l.id(b.idx)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.due, b.due); c != 0 {
			return c
		}
		return strings.Compare(l.uuid(a.idx), l.uuid(b.idx))
	})
	// One pass over the runs of equal BMCs: the skipped nodes are counted
	// and dropped, the rest compacted in place into each BMC's queue.
	s.gen++
	runs := 0
	for i := range items {
		if i == 0 || l.id(items[i].idx) != l.id(items[i-1].idx) {
			runs++
		}
	}
	c.queues = make([]bmcQueue, 0, runs)
	kept := 0
	for i := 0; i < len(items); {
		id := l.id(items[i].idx)
		j, first := i, kept
		for ; j < len(items) && l.id(items[j].idx) == id; j++ {
			switch idx := items[j].idx; {
			case l.maintenance(idx):
				c.st.Skipped.Maintenance++
				delete(s.failures, l.uuid(idx)) // leaving maintenance starts a fresh count
			case l.locked(idx):
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
			c.queues = append(c.queues, bmcQueue{first: int32(first), end: int32(kept), next: int32(first), state: st})
		}
		i = j
	}
	c.items = items[:kept:kept]
	c.ready = readyHeap{qs: make([]int32, len(c.queues)), queues: c.queues, items: c.items}
	for i := range c.ready.qs {
		c.ready.qs[i] = int32(i)
	}
	heap.Init(&c.ready)
	for id, st := range s.bmcs {
		if st.gen != s.gen && !st.hung.Load() {
			delete(s.bmcs, id)
		}
	}
	return c
}

// id is q's BMC identity.
func (c *cycle) id(q *bmcQueue) bmcID { return c.list.id(c.items[q.first].idx) }

// dispatch starts probes until every queue is drained or admitCtx ends,
// then waits for the running ones.
func (c *cycle) dispatch(probeCtx, admitCtx context.Context) {
	timer := time.NewTimer(0)
	timer.Stop()
	defer timer.Stop()
	for admitCtx.Err() == nil && (c.ready.Len() > 0 || c.inflight > 0) {
		var due <-chan time.Time
		if c.ready.Len() > 0 && c.inflight < c.s.cfg.Workers {
			wait := time.Until(c.start.Add(c.items[c.ready.top().next].due))
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
	qi := c.ready.pop()
	q := &c.queues[qi]
	idx := c.items[q.next].idx
	now := time.Now()
	switch {
	case q.state != nil && q.state.hung.Load():
		c.st.Skipped.Busy++
	case q.state != nil && !q.state.breaker.allow(c.s.cfg.Breaker, now):
		c.st.Skipped.Breaker++
	default:
		n := c.list.node(idx)
		prev := c.s.failures[n.UUID]
		if q.state == nil {
			q.state = &bmcState{}
		} else if q.state.breaker.state(c.s.cfg.Breaker, now) == stateHalfOpen {
			c.s.log.Debug("BMC circuit breaker half-open: trial probe", "bmc", n.BMC, "node", n.UUID)
		}
		st := q.state
		err := c.s.d.Runner.Periodic(admitCtx, func() {
			r := c.s.probe(probeCtx, n, st, prev)
			r.q = qi
			c.results <- r
		})
		if err != nil {
			if admitCtx.Err() == nil {
				c.s.log.Warn("worker pool refused a power-state probe; ending the cycle early", "error", err)
			}
			return false
		}
		q.next++
		c.inflight++
		return true
	}
	q.next++
	if q.pending() {
		c.ready.push(qi)
	}
	return true
}

// handle applies one probe's result to the counters, the node's failure
// count and its BMC's breaker, and makes the BMC available again.
func (c *cycle) handle(r result) {
	c.inflight--
	q := &c.queues[r.q]
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
		// A copy of the key (an assignment stores its key even when
		// one is there): the UUID shares a chunk of the listing, which
		// the count would keep alive for as long as it lasts.
		c.s.failures[strings.Clone(r.node.UUID)]++
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
	c.s.remember(c, q)
	if q.pending() {
		c.ready.push(r.q)
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
