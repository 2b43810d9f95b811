package db_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

func insertNode(t *testing.T, dbh *db.DB, uuid string) *db.Node {
	t.Helper()
	n := &db.Node{UUID: uuid, Driver: "fake-hardware"}
	if _, err := dbh.Bun().NewInsert().Model(n).Exec(context.Background()); err != nil {
		t.Fatalf("insert node %s: %v", uuid, err)
	}
	return n
}

func readNode(t *testing.T, dbh *db.DB, uuid string) *db.Node {
	t.Helper()
	n := new(db.Node)
	if err := dbh.Bun().NewSelect().Model(n).Where("uuid = ?", uuid).Scan(context.Background()); err != nil {
		t.Fatalf("read node %s: %v", uuid, err)
	}
	return n
}

// TestLeaseRace: eight conductors race for one free node; exactly one wins
// and the seven others learn who holds it.
func TestLeaseRace(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		dbh := dbtest.Open(t, d)
		const uuid = "10000000-0000-0000-0000-00000000race"
		insertNode(t, dbh, uuid)

		const racers = 8
		var wg sync.WaitGroup
		start := make(chan struct{})
		type result struct {
			holder string
			epoch  int64
			err    error
		}
		results := make([]result, racers)
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				holder := fmt.Sprintf("conductor-%d", i)
				<-start
				epoch, err := dbh.AcquireLease(context.Background(), uuid, holder, time.Minute)
				results[i] = result{holder, epoch, err}
			}()
		}
		close(start)
		wg.Wait()

		var winners []string
		for _, r := range results {
			var locked *db.NodeLockedError
			switch {
			case r.err == nil:
				winners = append(winners, r.holder)
				if r.epoch != 1 {
					t.Errorf("winner %s got epoch %d, want 1", r.holder, r.epoch)
				}
			case errors.As(r.err, &locked):
				if !errors.Is(r.err, db.ErrNodeLocked) || locked.Node != uuid {
					t.Errorf("%s: bad locked error %#v", r.holder, locked)
				}
			default:
				t.Errorf("%s: unexpected error: %v", r.holder, r.err)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("winners = %v, want exactly one", winners)
		}
		for _, r := range results {
			var locked *db.NodeLockedError
			if errors.As(r.err, &locked) && locked.Holder != winners[0] {
				t.Errorf("%s was told the holder is %q, want %q", r.holder, locked.Holder, winners[0])
			}
		}
		if n := readNode(t, dbh, uuid); n.Reservation == nil || *n.Reservation != winners[0] || n.ReservationEpoch != 1 {
			t.Errorf("row: reservation %v epoch %d, want %s epoch 1", n.Reservation, n.ReservationEpoch, winners[0])
		}
	})
}

// TestLeaseLifecycle walks acquire, renew, expiry and takeover, and checks
// that a fenced-off holder can neither renew nor release.
func TestLeaseLifecycle(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		const uuid = "10000000-0000-0000-0000-0000000lease"
		insertNode(t, dbh, uuid)

		e1, err := dbh.AcquireLease(ctx, uuid, "a", time.Minute)
		if err != nil || e1 != 1 {
			t.Fatalf("a acquires: epoch %d, %v", e1, err)
		}
		want := "Node " + uuid + " is locked by host a, please retry after the current operation is completed."
		if _, err := dbh.AcquireLease(ctx, uuid, "a", time.Minute); err == nil || err.Error() != want {
			t.Errorf("re-acquire by a: %v, want %q", err, want)
		}
		if err := dbh.RenewLease(ctx, uuid, "a", e1, time.Minute); err != nil {
			t.Errorf("a renews: %v", err)
		}
		if err := dbh.RenewLease(ctx, uuid, "b", e1, time.Minute); !errors.Is(err, db.ErrLeaseLost) {
			t.Errorf("b renews a's lease: %v, want ErrLeaseLost", err)
		}

		// a's lease lapses (as if a died): b takes over with a higher epoch.
		expire(t, dbh, uuid)
		e2, err := dbh.AcquireLease(ctx, uuid, "b", time.Minute)
		if err != nil || e2 != e1+1 {
			t.Fatalf("b takes over: epoch %d, %v; want %d", e2, err, e1+1)
		}
		for name, err := range map[string]error{
			"renew":   dbh.RenewLease(ctx, uuid, "a", e1, time.Minute),
			"release": dbh.ReleaseLease(ctx, uuid, "a", e1),
		} {
			if !errors.Is(err, db.ErrLeaseLost) {
				t.Errorf("stale holder a %s: %v, want ErrLeaseLost", name, err)
			}
		}
		// b's own lease lapses but nobody took it: renewing is still safe.
		expire(t, dbh, uuid)
		if err := dbh.RenewLease(ctx, uuid, "b", e2, time.Minute); err != nil {
			t.Errorf("b renews its lapsed, untaken lease: %v", err)
		}
		if err := dbh.ReleaseLease(ctx, uuid, "b", e2); err != nil {
			t.Fatalf("b releases: %v", err)
		}
		n := readNode(t, dbh, uuid)
		if diff := cmp.Diff([]any{(*string)(nil), true, e2}, []any{n.Reservation, n.ReservationExpiresAt.IsZero(), n.ReservationEpoch}); diff != "" {
			t.Errorf("released row (-want +got):\n%s", diff)
		}
		if _, err := dbh.AcquireLease(ctx, "no-such-node", "a", time.Minute); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("unknown node: %v, want ErrNotFound", err)
		}
	})
}

func TestReleaseLeasesHeldBy(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		for i, holder := range []string{"a", "a", "b"} {
			uuid := fmt.Sprintf("10000000-0000-0000-0000-00000000000%d", i)
			insertNode(t, dbh, uuid)
			if _, err := dbh.AcquireLease(ctx, uuid, holder, time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		n, err := dbh.ReleaseLeasesHeldBy(ctx, "a")
		if err != nil || n != 2 {
			t.Fatalf("released %d, %v; want 2", n, err)
		}
		if got := readNode(t, dbh, "10000000-0000-0000-0000-000000000002"); got.Reservation == nil || *got.Reservation != "b" {
			t.Errorf("b's lease was touched: %v", got.Reservation)
		}
	})
}

// expire moves a node's lease expiry into the past, as time passing would.
func expire(t *testing.T, dbh *db.DB, uuid string) {
	t.Helper()
	now, err := dbh.Now(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = dbh.Bun().NewUpdate().Table("nodes").Set("reservation_expires_at = ?", now.Add(-time.Second)).
		Where("uuid = ?", uuid).Exec(context.Background())
	if err != nil {
		t.Fatal(err)
	}
}
