package powersync

import (
	"hash/fnv"
	"slices"
	"time"
)

// item is one node due for a probe at a time.
type item struct {
	node Node
	due  time.Time
}

// bmcQueue holds one BMC's nodes for the current cycle, in due order.
type bmcQueue struct {
	key      string
	state    *bmcState
	items    []item
	next     int           // index of the next item to dispatch
	inflight bool          // a probe to this BMC is running
	probes   int           // probes completed this cycle
	busy     time.Duration // sum of this cycle's probe latencies
	index    int           // position in readyHeap, -1 when absent
}

func (q *bmcQueue) pending() bool { return q.next < len(q.items) }
func (q *bmcQueue) head() item    { return q.items[q.next] }
func (q *bmcQueue) left() int     { return len(q.items) - q.next }

// bmcKey is the serialisation key of n. A node without a BMC key gets one
// no real key can collide with.
func bmcKey(n Node) string {
	if n.BMC == "" {
		return "\x00node:" + n.UUID
	}
	return n.BMC
}

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

// sortItems orders a queue by due time, then UUID, for determinism.
func sortItems(items []item) {
	slices.SortFunc(items, func(a, b item) int {
		if c := a.due.Compare(b.due); c != 0 {
			return c
		}
		if a.node.UUID < b.node.UUID {
			return -1
		}
		return 1
	})
}

// readyHeap orders the BMC queues that may take a probe (not in flight,
// with items left) by their head's due time; among equally due heads, the
// BMC with the most nodes left goes first, since its probes are serial and
// it bounds the cycle (longest-processing-time first). It implements
// heap.Interface.
type readyHeap []*bmcQueue

func (h readyHeap) Len() int { return len(h) }
func (h readyHeap) Less(i, j int) bool {
	if c := h[i].head().due.Compare(h[j].head().due); c != 0 {
		return c < 0
	}
	if li, lj := h[i].left(), h[j].left(); li != lj {
		return li > lj
	}
	return h[i].key < h[j].key
}
func (h readyHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *readyHeap) Push(x any) {
	q := x.(*bmcQueue)
	q.index = len(*h)
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
