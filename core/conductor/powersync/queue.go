package powersync

import (
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
	state    *bmcState
	busy     time.Duration // sum of this cycle's probe latencies
	next     int32         // index in the cycle's items of the next to dispatch
	probes   int32         // probes completed this cycle
	index    int32         // position in readyHeap, -1 when absent
	rank     int32         // position in the cycle's queues, which are in BMC order
	inflight bool          // a probe to this BMC is running
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
// it bounds the cycle (longest-processing-time first). It implements
// heap.Interface.
type readyHeap struct {
	qs    []*bmcQueue
	items []item // the cycle's
}

func (h *readyHeap) Len() int { return len(h.qs) }
func (h *readyHeap) Less(i, j int) bool {
	qi, qj := h.qs[i], h.qs[j]
	if di, dj := h.items[qi.next].due, h.items[qj.next].due; di != dj {
		return di < dj
	}
	if li, lj := qi.left(), qj.left(); li != lj {
		return li > lj
	}
	return qi.rank < qj.rank
}
func (h *readyHeap) Swap(i, j int) {
	h.qs[i], h.qs[j] = h.qs[j], h.qs[i]
	h.qs[i].index, h.qs[j].index = int32(i), int32(j)
}
func (h *readyHeap) Push(x any) {
	q := x.(*bmcQueue)
	q.index = int32(len(h.qs))
	h.qs = append(h.qs, q)
}
func (h *readyHeap) Pop() any {
	old := h.qs
	q := old[len(old)-1]
	old[len(old)-1] = nil
	q.index = -1
	h.qs = old[:len(old)-1]
	return q
}
