package conductor

import (
	"context"
	"fmt"
	"sync"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/db"
)

// maxCreateBatch bounds the nodes one group commit writes.
const maxCreateBatch = 64

// maxCreateWriters bounds the group commits in flight at once: while they
// run, concurrent creates queue and go out together in the next one.
const maxCreateWriters = 2

// groupCreator writes the nodes of concurrent create_node calls together,
// with one commit (db.Store.CreateMany), instead of one commit each. Nothing
// waits for a batch to fill: a create that finds a writer free is written
// at once (alone, unless others are queued); only creates arriving while
// maxCreateWriters batches are being written wait, and go out together
// next. Each caller gets its own node's result, exactly what Store.Create
// would have given it, and returns only once its node is committed (or has
// failed).
type groupCreator struct {
	store *db.Store
	// maxWriters is maxCreateWriters; 0 turns grouping off (benchmarks):
	// every create is written alone, as Store.Create.
	maxWriters int

	mu      sync.Mutex
	queue   []*createCall
	writers int
}

type createCall struct {
	ctx  context.Context
	obj  objects.Object
	done chan error
}

// Create stores obj as Store.Create does, together with the creates
// queued at the same time.
func (g *groupCreator) Create(ctx context.Context, obj objects.Object) error {
	if g.maxWriters == 0 {
		return g.store.Create(ctx, obj)
	}
	c := &createCall{ctx: ctx, obj: obj, done: make(chan error, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	if g.writers < g.maxWriters {
		g.writers++
		g.mu.Unlock()
		g.write()
	} else {
		g.mu.Unlock()
	}
	return <-c.done
}

// write holds one writer slot: it writes the head of the queue, then hands
// the slot to a new goroutine when more is queued (so that no caller keeps
// writing others' nodes after its own), else gives it back.
func (g *groupCreator) write() {
	g.mu.Lock()
	n := min(len(g.queue), maxCreateBatch)
	batch := make([]*createCall, n)
	copy(batch, g.queue)
	g.queue = append(g.queue[:0], g.queue[n:]...)
	g.mu.Unlock()

	if len(batch) > 0 {
		g.writeBatch(batch)
	}

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.mu.Unlock()
		go g.write()
		return
	}
	g.writers--
	g.mu.Unlock()
}

// writeBatch writes batch and answers each call; a panic becomes every
// unanswered call's error, as the RPC server makes it for a lone create.
func (g *groupCreator) writeBatch(batch []*createCall) {
	answered := 0
	defer func() {
		if v := recover(); v != nil {
			for _, c := range batch[answered:] {
				c.done <- fmt.Errorf("create node: panic: %v", v)
			}
		}
	}()
	objs := make([]objects.Object, len(batch))
	for i, c := range batch {
		objs[i] = c.obj
	}
	// The batch is written whatever happens to the callers' requests, as
	// one caller's Create runs to its end: a caller cancelling must not
	// undo the others' nodes.
	ctx := context.WithoutCancel(batch[0].ctx)
	errs := g.store.CreateMany(ctx, objs)
	for i, c := range batch {
		c.done <- errs[i]
		answered++
	}
}
