package powersync

import (
	"container/heap"
	"hash/fnv"
	"strings"
	"time"
)

// item is one node due for a probe at an offset from the cycle's start:
// the node's index in the cycle's listing rather than the node, since a
// conductor holding 100,000 nodes keeps one item per node for a cycle.
type item struct {
	due time.Duration
	idx int32 // index in the listing, which is in the Source's order
}

// bmcID identifies a BMC across cycles: its key, or for a node without
// one, the node itself (so it never collides with a real key).
type bmcID struct{ bmc, node string }

func compareIDs(a, b bmcID) int {
	if c := strings.Compare(a.bmc, b.bmc); c != 0 {
		return c
	}
	return strings.Compare(a.node, b.node)
}

// bmcQueue holds one BMC's nodes for the current cycle, in due order: a
// run [first, end) of the cycle's items, which are sorted by BMC. Its
// fields are sized for one queue per node, the usual case (one BMC per
// server).
type bmcQueue struct {
	first, end int32 // its run of the cycle's items
	// state is nil until the BMC is probed, unless it is remembered from
	// an earlier cycle (see Scheduler.bmcs).
	state  *bmcState
	busy   time.Duration // sum of this cycle's probe latencies
	next   int32         // index in the cycle's items of the next to dispatch
	probes int32         // probes completed this cycle
}

func (q *bmcQueue) pending() bool { return q.next < q.end }
func (q *bmcQueue) left() int     { return int(q.end - q.next) }

// offset is n's stable start offset within a cycle: a hash of its UUID,
// so the same node is probed at about the same phase every cycle.
func offset(uuid string, spread time.Duration) time.Duration {
	if spread <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(uuid))
	return time.Duration(h.Sum64() % uint64(spread))
}

// readyHeap orders the BMC queues that may take a probe (not in flight,
// with items left) by their head's due time; among equally due heads, the
// BMC with the most nodes left goes first, since its probes are serial and
// it bounds the cycle (longest-processing-time first), then the BMC order.
// It holds indexes into the cycle's queues (4 bytes a BMC, not a pointer)
// and implements heap.Interface for heap.Init and heap.Fix; push and pop
// use heap.Fix rather than heap.Push and heap.Pop, which would box every
// index they move.
type readyHeap struct {
	qs     []int32
	queues []bmcQueue // the cycle's, in BMC order
	items  []item     // the cycle's
}

func (h *readyHeap) Len() int { return len(h.qs) }
func (h *readyHeap) Less(i, j int) bool {
	qi, qj := &h.queues[h.qs[i]], &h.queues[h.qs[j]]
	if di, dj := h.items[qi.next].due, h.items[qj.next].due; di != dj {
		return di < dj
	}
	if li, lj := qi.left(), qj.left(); li != lj {
		return li > lj
	}
	return h.qs[i] < h.qs[j]
}
func (h *readyHeap) Swap(i, j int) { h.qs[i], h.qs[j] = h.qs[j], h.qs[i] }
func (h *readyHeap) Push(x any)    { h.qs = append(h.qs, x.(int32)) }
func (h *readyHeap) Pop() any {
	q := h.qs[len(h.qs)-1]
	h.qs = h.qs[:len(h.qs)-1]
	return q
}

// top is the readiest queue; the heap must not be empty.
func (h *readyHeap) top() *bmcQueue { return &h.queues[h.qs[0]] }

// push adds queue q.
func (h *readyHeap) push(q int32) {
	h.qs = append(h.qs, q)
	heap.Fix(h, len(h.qs)-1)
}

// pop removes the readiest queue and returns its index.
func (h *readyHeap) pop() int32 {
	q, n := h.qs[0], len(h.qs)-1
	h.qs[0] = h.qs[n]
	h.qs = h.qs[:n]
	if n > 0 {
		heap.Fix(h, 0)
	}
	return q
}
