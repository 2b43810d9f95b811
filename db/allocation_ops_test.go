package db_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// TestReserveNode: the transaction that gives a node to an allocation
// holds only under the caller's lease and only while nothing took the
// node; deleting the allocation frees the node.
func TestReserveNode(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		s, reg := latestStore(t, dbh)
		n := newNode(t, reg, "r-01")
		if err := s.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		alloc := func(uuid string) *objects.Allocation {
			a := &objects.Allocation{UUID: uuid, State: objects.AllocationAllocating, Extra: map[string]any{}}
			if err := s.Create(ctx, a); err != nil {
				t.Fatal(err)
			}
			return a
		}
		a1 := alloc("a0000000-0000-0000-0000-000000000001")
		a2 := alloc("a0000000-0000-0000-0000-000000000002")
		epoch, err := dbh.AcquireLease(ctx, n.UUID, "c1", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		reserve := func(a *objects.Allocation, holder string, epoch int64) error {
			cur, err := s.GetNode(ctx, n.UUID)
			if err != nil {
				t.Fatal(err)
			}
			cur.AllocationID, cur.InstanceUUID = &a.ID, &a.UUID
			a.NodeID, a.State = &cur.ID, objects.AllocationActive
			return s.ReserveNode(ctx, a, cur, holder, epoch)
		}
		if err := reserve(a1, "c1", epoch+1); !errors.Is(err, db.ErrLeaseLost) {
			t.Errorf("wrong epoch: %v, want ErrLeaseLost", err)
		}
		if err := reserve(a1, "c1", epoch); err != nil {
			t.Fatal(err)
		}
		if err := reserve(a2, "c1", epoch); !errors.Is(err, db.ErrNodeAssociated) {
			t.Errorf("second allocation: %v, want ErrNodeAssociated", err)
		}
		if got, _ := s.AllocationByID(ctx, a2.ID); got.State != objects.AllocationAllocating || got.NodeID != nil {
			t.Errorf("refused allocation was written: %s %v", got.State, got.NodeID)
		}
		got, _ := s.GetNode(ctx, n.UUID)
		if *got.AllocationID != a1.ID || *got.InstanceUUID != a1.UUID {
			t.Errorf("node = %v %v", got.AllocationID, got.InstanceUUID)
		}
		if err := s.DestroyAllocation(ctx, a1); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GetNode(ctx, n.UUID); got.AllocationID != nil || got.InstanceUUID != nil {
			t.Errorf("freed node = %v %v", got.AllocationID, got.InstanceUUID)
		}
		if err := s.DestroyAllocation(ctx, a1); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("second destroy: %v, want ErrNotFound", err)
		}
	})
}
