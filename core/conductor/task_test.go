package conductor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// newNode stores a fake-hardware node in state and returns it.
func newNode(t *testing.T, store *db.Store, state string) *objects.Node {
	t.Helper()
	n := &objects.Node{UUID: uuid.NewString(), Driver: "fake-hardware", ProvisionState: state}
	if err := store.Create(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTaskManagerLeases(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		store := newStore(t, dbtest.Open(t, d))
		dbh := store.DB()
		ctx := context.Background()
		const interval = 30 * time.Millisecond
		tm := NewTaskManager(store, "cond-a", time.Second, 2, interval, testLogger(t))

		t.Run("held lease: retries, then NodeLocked with Ironic's message", func(t *testing.T) {
			n := newNode(t, store, "available")
			if _, err := dbh.AcquireLease(ctx, n.UUID, "cond-b", time.Minute); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := tm.Acquire(ctx, n.UUID, "test")
			class, code := classOf(err)
			want := fmt.Sprintf("Node %s is locked by host cond-b, please retry after the current operation is completed.", n.UUID)
			if class != "NodeLocked" || code != http.StatusConflict || err.Error() != want {
				t.Fatalf("Acquire = %v (%s %d), want NodeLocked 409 %q", err, class, code, want)
			}
			if waited := time.Since(start); waited < 2*interval {
				t.Fatalf("gave up after %v, before its 2 retries %v apart", waited, interval)
			}
			if !errors.Is(err, db.ErrNodeLocked) {
				t.Fatal("NodeLocked does not wrap db.ErrNodeLocked")
			}
		})

		t.Run("released during the retries: acquired", func(t *testing.T) {
			n := newNode(t, store, "available")
			epoch, err := dbh.AcquireLease(ctx, n.UUID, "cond-b", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			// Enough retries that a loaded machine (the release below may be
			// scheduled late) still releases within them.
			patient := NewTaskManager(store, "cond-a", time.Second, 400, interval, testLogger(t))
			go func() {
				time.Sleep(interval / 2)
				_ = dbh.ReleaseLease(ctx, n.UUID, "cond-b", epoch)
			}()
			task, err := patient.Acquire(ctx, n.UUID, "test")
			if err != nil {
				t.Fatalf("Acquire after release: %v", err)
			}
			task.Release(ctx)
		})

		t.Run("a conductor never re-enters its own lease", func(t *testing.T) {
			n := newNode(t, store, "available")
			task, err := tm.Acquire(ctx, n.UUID, "first")
			if err != nil {
				t.Fatal(err)
			}
			defer task.Release(ctx)
			if _, err := tm.Acquire(ctx, n.UUID, "second"); !errors.Is(err, db.ErrNodeLocked) {
				t.Fatalf("second Acquire of own live lease = %v, want NodeLocked", err)
			}
			if _, err := tm.TakeOver(ctx, n.UUID, "cond-a", "takeover", time.Second); !errors.Is(err, db.ErrNodeLocked) {
				t.Fatalf("TakeOver of own lease = %v, want NodeLocked", err)
			}
		})

		t.Run("shared access writes no lease", func(t *testing.T) {
			n := newNode(t, store, "available")
			if _, err := dbh.AcquireLease(ctx, n.UUID, "cond-b", time.Minute); err != nil {
				t.Fatal(err)
			}
			before := readLease(t, dbh, n.UUID)
			got, err := tm.Shared(ctx, n.UUID)
			if err != nil || got.UUID != n.UUID {
				t.Fatalf("Shared = %v, %v", got, err)
			}
			if after := readLease(t, dbh, n.UUID); after != before {
				t.Fatalf("Shared changed the lease: %+v → %+v", before, after)
			}
		})

		t.Run("renewed while held, free after release", func(t *testing.T) {
			short := NewTaskManager(store, "cond-a", time.Second, 0, 0, testLogger(t))
			n := newNode(t, store, "available")
			task, err := short.Acquire(ctx, n.UUID, "long work")
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * time.Second) // three lease lifetimes
			if _, err := dbh.AcquireLease(ctx, n.UUID, "cond-b", time.Minute); !errors.Is(err, db.ErrNodeLocked) {
				t.Fatalf("lease not renewed: another conductor got it (%v)", err)
			}
			task.Release(ctx)
			if short.Held() != 0 {
				t.Fatalf("%d leases still tracked after release", short.Held())
			}
			if _, err := dbh.AcquireLease(ctx, n.UUID, "cond-b", time.Minute); err != nil {
				t.Fatalf("lease not free after release: %v", err)
			}
		})

		t.Run("a task whose lease was taken over cannot save", func(t *testing.T) {
			n := newNode(t, store, "deploying")
			task, err := tm.Acquire(ctx, n.UUID, "deploy")
			if err != nil {
				t.Fatal(err)
			}
			defer task.Release(ctx)
			// cond-a has no conductors row, so it is not live: cond-b may
			// take its lease over.
			if _, err := dbh.TakeOverLease(ctx, n.UUID, "cond-a", "cond-b", time.Minute, time.Minute); err != nil {
				t.Fatalf("TakeOverLease from a dead holder: %v", err)
			}
			task.Node.ProvisionState = "active"
			if err := task.Save(ctx); !errors.Is(err, db.ErrLeaseLost) || !task.Lost() {
				t.Fatalf("Save after takeover = %v (lost %v), want ErrLeaseLost", err, task.Lost())
			}
			if got, _ := store.GetNode(ctx, n.UUID); got.ProvisionState != "deploying" || deref(got.Reservation) != "cond-b" {
				t.Fatalf("fenced save wrote: state %q holder %v", got.ProvisionState, deref(got.Reservation))
			}
		})
	})
}

type leaseRow struct {
	holder string
	epoch  int64
}

func readLease(t *testing.T, dbh *db.DB, uuid string) leaseRow {
	t.Helper()
	var row db.Node
	if err := dbh.Bun().NewSelect().Model(&row).Where("uuid = ?", uuid).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	return leaseRow{holder: deref(row.Reservation), epoch: row.ReservationEpoch}
}
