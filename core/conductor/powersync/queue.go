package powersync

import (
	"hash/fnv"
	"strings"
	"time"
)

// item is one node due for a probe at an offset from the cycle's start.
// It points into the cycle's node list rather than copying the node: a
// conductor holding 100,000 nodes keeps one item per node for a cycle.
type item struct {
	node *Node
	due  time.Duration
	pos  int32 // index in the node list
}

// bmcID identifies a BMC across cycles: its key, or for a node without
// one, the node itself (so it never collides with a real key).
type bmcID struct{ bmc, node string }

func idOf(n *Node) bmcID {
	if n.BMC == "" {
		return bmcID{node: n.UUID}
	}
	return bmcID{bmc: n.BMC}
}

func compareIDs(a, b bmcID) int {
	if c := strings.Compare(a.bmc, b.bmc); c != 0 {
		return c
	}
	return strings.Compare(a.node, b.node)
}

// bmcQueue holds one BMC's nodes for the current cycle, in due order: a
// run of the cycle's items, which are sorted by BMC. Its fields are sized
// for one queue per node, the usual case (one BMC per server).
type bmcQueue struct {
	items []item
	// state is nil until the BMC is probed, unless it is remembered from
	// an earlier cycle (see Scheduler.bmcs).
	state    *bmcState
	busy     time.Duration // sum of this cycle's probe latencies
	next     int32         // index of the next item to dispatch
	probes   int32         // probes completed this cycle
	index    int32         // position in readyHeap, -1 when absent
	rank     int32         // position in the cycle's queues, which are in BMC order
	inflight bool          // a probe to this BMC is running
}

func (q *bmcQueue) pending() bool { return int(q.next) < len(q.items) }
func (q *bmcQueue) head() item    { return q.items[q.next] }
func (q *bmcQueue) left() int     { return len(q.items) - int(q.next) }
func (q *bmcQueue) id() bmcID     { return idOf(q.items[0].node) }

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
type readyHeap []*bmcQueue

func (h readyHeap) Len() int { return len(h) }
func (h readyHeap) Less(i, j int) bool {
	if di, dj := h[i].head().due, h[j].head().due; di != dj {
		return di < dj
	}
	if li, lj := h[i].left(), h[j].left(); li != lj {
		return li > lj
	}
	return h[i].rank < h[j].rank
}
func (h readyHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = int32(i), int32(j)
}
func (h *readyHeap) Push(x any) {
	q := x.(*bmcQueue)
	q.index = int32(len(*h))
	*h = append(*h, q)
}
func (h *readyHeap) Pop() any {
	old := *h
	q := old[len(old)-1]
	old[len(old)-1] = nil
	q.index = -1
	*h = old[:len(old)-1]
	return q
}
