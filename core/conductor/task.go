package conductor

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/plugins/redact"
)

// TaskManager takes, renews and releases node leases for one conductor
// (Ironic's task_manager, on leases). It is safe for concurrent use.
type TaskManager struct {
	store    *db.Store
	holder   string
	ttl      time.Duration
	attempts int
	interval time.Duration
	log      *slog.Logger
	// history records what saves change (nil: nothing recorded).
	history *historyRecorder
	// metrics observes provisioning durations (nil: none).
	metrics *Metrics

	mu   sync.Mutex
	held map[string]*Task // by node UUID
}

// NewTaskManager returns a task manager acting as holder. attempts and
// interval bound the retries on a held lease; ttl is the lease duration.
func NewTaskManager(store *db.Store, holder string, ttl time.Duration, attempts int, interval time.Duration, log *slog.Logger) *TaskManager {
	return &TaskManager{store: store, holder: holder, ttl: ttl, attempts: attempts, interval: interval,
		log: log, held: map[string]*Task{}}
}

// Task is an exclusive hold on one node: its lease, renewed in the
// background until Release. Node is the node as loaded under the lease.
type Task struct {
	// Node is the node, loaded after the lease was taken.
	Node *objects.Node
	// Purpose says why the lease is held, for logs.
	Purpose string

	tm        *TaskManager
	epoch     int64
	log       *slog.Logger
	stopRenew context.CancelFunc
	renewed   chan struct{}
	lost      atomic.Bool
	once      sync.Once
	// saved is the node's state as last loaded or saved, requestID the
	// request that started the task: the node history (history.go).
	saved     nodeState
	requestID string
	user      string
	// errorType, when set, is the event type of a last_error this task
	// records (else its purpose's).
	errorType string
}

// Shared returns the node whose UUID or name is ident without taking its
// lease: reads never lock (prior-art item 26).
func (tm *TaskManager) Shared(ctx context.Context, ident string) (*objects.Node, error) {
	n, err := tm.store.GetNode(ctx, ident)
	if errors.Is(err, db.ErrNotFound) {
		return nil, errNodeNotFound(ident, err)
	}
	return n, err
}

// Acquire takes the lease on the node named by ident (UUID or name) for
// purpose, retrying node_locked_retry_attempts times node_locked_retry_
// interval apart while someone else holds it; then it answers NodeLocked
// (409) with Ironic's message. The lease is renewed every ttl/3 until
// Release.
func (tm *TaskManager) Acquire(ctx context.Context, ident, purpose string) (*Task, error) {
	n, err := tm.Shared(ctx, ident)
	if err != nil {
		return nil, err
	}
	var epoch int64
	for attempt := 0; ; attempt++ {
		epoch, err = tm.store.DB().AcquireLease(ctx, n.UUID, tm.holder, tm.ttl)
		var locked *db.NodeLockedError
		if !errors.As(err, &locked) {
			break
		}
		if attempt >= tm.attempts {
			return nil, errNodeLocked(locked)
		}
		select {
		case <-ctx.Done():
			return nil, errNodeLocked(locked)
		case <-time.After(tm.interval):
		}
	}
	if errors.Is(err, db.ErrNotFound) {
		return nil, errNodeNotFound(ident, err)
	}
	if err != nil {
		return nil, err
	}
	return tm.start(ctx, n.UUID, epoch, purpose)
}

// TryAcquire takes a free or expired lease once, without retrying.
func (tm *TaskManager) TryAcquire(ctx context.Context, uuid, purpose string) (*Task, error) {
	epoch, err := tm.store.DB().AcquireLease(ctx, uuid, tm.holder, tm.ttl)
	if err != nil {
		return nil, err
	}
	return tm.start(ctx, uuid, epoch, purpose)
}

// TakeOver takes the lease deadHolder left on a node when deadHolder is
// not a live conductor (heartbeat older than liveTimeout) or its lease
// expired. It refuses this conductor's own leases.
func (tm *TaskManager) TakeOver(ctx context.Context, uuid, deadHolder, purpose string, liveTimeout time.Duration) (*Task, error) {
	epoch, err := tm.store.DB().TakeOverLease(ctx, uuid, deadHolder, tm.holder, tm.ttl, liveTimeout)
	if err != nil {
		return nil, err
	}
	return tm.start(ctx, uuid, epoch, purpose)
}

// start loads the node under a fresh lease and starts renewing it.
func (tm *TaskManager) start(ctx context.Context, uuid string, epoch int64, purpose string) (*Task, error) {
	n, err := tm.store.GetNode(ctx, uuid)
	if err != nil {
		_ = tm.store.DB().ReleaseLease(context.WithoutCancel(ctx), uuid, tm.holder, epoch)
		if errors.Is(err, db.ErrNotFound) {
			return nil, errNodeNotFound(uuid, err)
		}
		return nil, err
	}
	rctx, stop := context.WithCancel(context.Background())
	log := tm.log.With("node", uuid)
	if n.Name != nil {
		log = log.With("node_name", *n.Name)
	}
	log = log.With("purpose", purpose, "epoch", epoch)
	reqID := rpc.RequestID(ctx)
	if reqID != "" {
		log = log.With("request_id", reqID)
	}
	t := &Task{Node: n, Purpose: purpose, tm: tm, epoch: epoch, stopRenew: stop, renewed: make(chan struct{}), log: log,
		saved: stateOf(n), requestID: reqID, user: rpc.User(ctx)}
	tm.mu.Lock()
	tm.held[uuid] = t
	tm.mu.Unlock()
	go t.renew(rctx)
	t.log.Debug("lease acquired")
	return t, nil
}

// renew extends the lease every ttl/3 until stopped or lost.
func (t *Task) renew(ctx context.Context) {
	defer close(t.renewed)
	tick := time.NewTicker(max(t.tm.ttl/3, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := t.tm.store.DB().RenewLease(ctx, t.Node.UUID, t.tm.holder, t.epoch, t.tm.ttl)
		switch {
		case errors.Is(err, db.ErrLeaseLost):
			t.lost.Store(true)
			t.log.Error("lease lost: another conductor took the node over; this task stops writing to it")
			return
		case err != nil && ctx.Err() == nil:
			t.log.Warn("lease renewal failed; retrying", "error", err)
		}
	}
}

// Lost reports whether the lease was taken over while the task ran.
func (t *Task) Lost() bool { return t.lost.Load() }

// Save writes the node's changes if this task still holds its lease.
func (t *Task) Save(ctx context.Context) error {
	maskLastError(t.Node)
	err := t.tm.store.SaveFenced(ctx, t.Node, t.tm.holder, t.epoch)
	if errors.Is(err, db.ErrLeaseLost) {
		t.lost.Store(true)
	}
	if err == nil {
		t.recordSaved(ctx)
	}
	return err
}

// maskLastError hides the credentials a driver's or a BMC's error text
// quoted (a URL's userinfo, a password=… pair; plugins/redact) before
// last_error is written: every API reader sees it, the database and its
// backups keep it, and no driver needs it back.
func maskLastError(n *objects.Node) {
	if n.LastError == nil {
		return
	}
	if m := redact.Text(*n.LastError); m != *n.LastError {
		n.LastError = &m
	}
}

// Release stops renewing and frees the lease, presenting the fencing
// epoch; a lease already lost (or a node deleted) is not an error. It may
// be called more than once.
func (t *Task) Release(ctx context.Context) {
	t.once.Do(func() {
		t.stopRenew()
		<-t.renewed
		t.tm.mu.Lock()
		if t.tm.held[t.Node.UUID] == t {
			delete(t.tm.held, t.Node.UUID)
		}
		t.tm.mu.Unlock()
		err := t.tm.store.DB().ReleaseLease(context.WithoutCancel(ctx), t.Node.UUID, t.tm.holder, t.epoch)
		switch {
		case err == nil:
			t.log.Debug("lease released")
		case errors.Is(err, db.ErrLeaseLost):
			t.log.Debug("lease already gone at release")
		default:
			t.log.Error("lease release failed; it expires on its own", "error", err)
		}
	})
}

// Holds reports whether this conductor holds a task on the node.
func (tm *TaskManager) Holds(uuid string) bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	_, ok := tm.held[uuid]
	return ok
}

// Held returns how many leases this conductor holds.
func (tm *TaskManager) Held() int {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return len(tm.held)
}

// ReleaseAll releases every lease still held (shutdown after the graceful
// timeout) and returns how many there were.
func (tm *TaskManager) ReleaseAll(ctx context.Context) int {
	tm.mu.Lock()
	tasks := make([]*Task, 0, len(tm.held))
	for _, t := range tm.held {
		tasks = append(tasks, t)
	}
	tm.mu.Unlock()
	for _, t := range tasks {
		t.Release(ctx)
	}
	return len(tasks)
}
