package conductor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// schedulable makes a node available, powered, of resource class rc.
func (h *harness) schedulable(n *objects.Node, rc string) {
	h.t.Helper()
	if _, err := h.dbh.Bun().NewUpdate().Table(db.TableNodes).Set("provision_state = 'available'").
		Set("power_state = 'power off'").Set("resource_class = ?", rc).Where("id = ?", n.ID).Exec(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

// allocation reads an allocation from the database.
func (h *harness) allocation(uuid string) *objects.Allocation {
	h.t.Helper()
	a, err := h.store.GetAllocation(context.Background(), uuid)
	if err != nil {
		h.t.Fatal(err)
	}
	return a
}

// settled waits until the allocation left state allocating.
func (h *harness) settled(uuid string) *objects.Allocation {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		a := h.allocation(uuid)
		if a.State != objects.AllocationAllocating {
			return a
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("allocation %s still allocating", uuid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (h *harness) allocate(a *objects.Allocation) *objects.Allocation {
	h.t.Helper()
	out, err := h.api.CreateAllocation(context.Background(), a, nil)
	if err != nil {
		h.t.Fatalf("create_allocation: %v", err)
	}
	return h.settled(out.UUID)
}

func TestAllocationScheduler(t *testing.T) {
	h := newHarness(t, nil, "cond-1", nil)
	ctx := context.Background()
	gold1, gold2, silver := h.enroll("gold-1"), h.enroll("gold-2"), h.enroll("silver-1")
	h.schedulable(gold1, "gold")
	h.schedulable(gold2, "gold")
	h.schedulable(silver, "silver")

	t.Run("no match", func(t *testing.T) {
		a := h.allocate(&objects.Allocation{ResourceClass: ptr("bronze")})
		want := "Failed to process allocation " + a.UUID + ": no available nodes match the resource class bronze."
		if a.State != objects.AllocationError || a.LastError == nil || *a.LastError != want || a.NodeID != nil {
			t.Errorf("allocation = %s %v %v, want error %q", a.State, deref(a.LastError), a.NodeID, want)
		}
	})
	t.Run("candidates", func(t *testing.T) {
		a := h.allocate(&objects.Allocation{ResourceClass: ptr("gold"), CandidateNodes: []string{silver.UUID}})
		want := "Failed to process allocation " + a.UUID + ": none of the requested nodes are available and match the resource class gold."
		if a.State != objects.AllocationError || *a.LastError != want {
			t.Errorf("allocation = %s %v", a.State, deref(a.LastError))
		}
	})
	t.Run("traits", func(t *testing.T) {
		// No node has traits (no node_traits rows): none matches.
		a := h.allocate(&objects.Allocation{ResourceClass: ptr("silver"), Traits: []string{"CUSTOM_GPU"}})
		if a.State != objects.AllocationError || !strings.HasSuffix(*a.LastError, "no suitable nodes have the requested traits CUSTOM_GPU.") {
			t.Errorf("allocation = %s %v", a.State, deref(a.LastError))
		}
	})

	// The node named as the allocation is preferred (API 1.79).
	a := h.allocate(&objects.Allocation{ResourceClass: ptr("gold"), Name: ptr("gold-2")})
	if a.State != objects.AllocationActive || a.NodeID == nil || *a.NodeID != gold2.ID {
		t.Fatalf("allocation = %s node %v, want active on gold-2 (%d); %v", a.State, a.NodeID, gold2.ID, deref(a.LastError))
	}
	n := h.node(gold2.UUID)
	if n.AllocationID == nil || *n.AllocationID != a.ID || n.InstanceUUID == nil || *n.InstanceUUID != a.UUID {
		t.Errorf("node allocation_id %v instance_uuid %v", n.AllocationID, deref(n.InstanceUUID))
	}
	if tr, ok := n.InstanceInfo["traits"].([]any); !ok || len(tr) != 0 {
		t.Errorf("instance_info = %v", n.InstanceInfo)
	}
	// The other gold node is the only one left; then none.
	b := h.allocate(&objects.Allocation{ResourceClass: ptr("gold")})
	if b.State != objects.AllocationActive || *b.NodeID != gold1.ID {
		t.Fatalf("second allocation = %s %v", b.State, deref(b.LastError))
	}
	if c := h.allocate(&objects.Allocation{ResourceClass: ptr("gold")}); c.State != objects.AllocationError {
		t.Errorf("third allocation = %s", c.State)
	}

	// An allocated node cannot be deleted unless in maintenance.
	err := h.api.DestroyNode(ctx, h.node(gold1.UUID))
	if class, code := classOf(err); class != "NodeAssociated" || code != http.StatusConflict {
		t.Errorf("destroy allocated node: %v (%s %d)", err, class, code)
	}

	// Deleting the allocation frees the node.
	if err := h.api.DestroyAllocation(ctx, b, h.node(gold1.UUID)); err != nil {
		t.Fatal(err)
	}
	if n := h.node(gold1.UUID); n.AllocationID != nil || n.InstanceUUID != nil {
		t.Errorf("freed node: allocation_id %v instance_uuid %v", n.AllocationID, deref(n.InstanceUUID))
	}
	if _, err := h.store.GetAllocation(ctx, b.UUID); err == nil {
		t.Error("allocation still there")
	}

	// Deploy the allocated node, then undeploy: the allocation goes (as
	// in Ironic's tear down).
	if err := h.api.DoNodeDeploy(ctx, h.node(gold2.UUID), false, nil); err != nil {
		t.Fatal(err)
	}
	h.waitState(gold2.UUID, "active")
	err = h.api.DestroyAllocation(ctx, a, h.node(gold2.UUID))
	if class, _ := classOf(err); class != "InvalidState" || !strings.Contains(err.Error(), "because the node is active") {
		t.Errorf("destroy allocation of an active node: %v", err)
	}
	if err := h.api.DoNodeTearDown(ctx, h.node(gold2.UUID)); err != nil {
		t.Fatal(err)
	}
	n = h.waitState(gold2.UUID, "available")
	if n.AllocationID != nil || n.InstanceUUID != nil {
		t.Errorf("after tear down: allocation_id %v instance_uuid %v", n.AllocationID, deref(n.InstanceUUID))
	}
	if _, err := h.store.GetAllocation(ctx, a.UUID); err == nil {
		t.Error("allocation survived the tear down")
	}
}

func TestAllocationBackfill(t *testing.T) {
	h := newHarness(t, nil, "cond-1", nil)
	ctx := context.Background()
	n := h.enroll("deployed")
	h.schedulable(n, "gold")

	// Not active yet: refused, and kept in state error.
	_, err := h.api.CreateAllocation(ctx, &objects.Allocation{ResourceClass: ptr("silver"), NodeID: ptr(n.ID)}, h.node(n.UUID))
	class, code := classOf(err)
	if class != "AllocationFailed" || code != http.StatusBadRequest ||
		!strings.Contains(err.Error(), `Node must be in the "active" state, but the current state is "available"; Resource class gold does not match the requested resource class silver.`) {
		t.Errorf("backfill of an available node: %v (%s %d)", err, class, code)
	}

	if _, err := h.dbh.Bun().NewUpdate().Table(db.TableNodes).Set("provision_state = 'active'").Where("id = ?", n.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	a, err := h.api.CreateAllocation(ctx, &objects.Allocation{ResourceClass: ptr("gold"), NodeID: ptr(n.ID)}, h.node(n.UUID))
	if err != nil {
		t.Fatal(err)
	}
	if a.State != objects.AllocationActive || *a.NodeID != n.ID {
		t.Errorf("backfilled = %s %v", a.State, a.NodeID)
	}
	if got := h.node(n.UUID); *got.AllocationID != a.ID || *got.InstanceUUID != a.UUID {
		t.Errorf("node = %v %v", got.AllocationID, deref(got.InstanceUUID))
	}
	// A second one for the same node: NodeAssociated.
	_, err = h.api.CreateAllocation(ctx, &objects.Allocation{NodeID: ptr(n.ID)}, h.node(n.UUID))
	if class, code := classOf(err); class != "NodeAssociated" || code != http.StatusConflict {
		t.Errorf("second backfill: %v (%s %d)", err, class, code)
	}
}

// TestAllocationsConcurrent proves two allocations never get one node:
// two conductors on one database process 16 allocations at once for 10
// matching nodes.
func TestAllocationsConcurrent(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		dbh := dbtest.Open(t, d)
		more := func(c *Config) { c.LockRetryAttempts = 100; c.LockRetryInterval = 10 * time.Millisecond }
		h1 := newHarness(t, dbh, "cond-1", more)
		h2 := newHarness(t, dbh, "cond-2", more)
		for i := range 10 {
			h1.schedulable(h1.enroll(fmt.Sprintf("n%d", i)), "gold")
		}
		const allocations = 16
		uuids := make([]string, allocations)
		var wg sync.WaitGroup
		for i := range allocations {
			wg.Add(1)
			go func() {
				defer wg.Done()
				h := []*harness{h1, h2}[i%2]
				for {
					a, err := h.api.CreateAllocation(context.Background(), &objects.Allocation{ResourceClass: ptr("gold")}, nil)
					if class, _ := classOf(err); class == "NoFreeConductorWorker" {
						time.Sleep(5 * time.Millisecond)
						continue
					}
					if err != nil {
						t.Errorf("create_allocation: %v", err)
						return
					}
					uuids[i] = a.UUID
					return
				}
			}()
		}
		wg.Wait()
		byNode := map[int64]string{}
		active := 0
		for _, u := range uuids {
			if u == "" {
				continue
			}
			a := h1.settled(u)
			if a.State != objects.AllocationActive {
				continue
			}
			active++
			if other, dup := byNode[*a.NodeID]; dup {
				t.Errorf("node %d given to %s and %s", *a.NodeID, other, a.UUID)
			}
			byNode[*a.NodeID] = a.UUID
			var n db.Node
			if err := dbh.Bun().NewSelect().Model(&n).Where("id = ?", *a.NodeID).Scan(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n.AllocationID == nil || *n.AllocationID != a.ID || n.InstanceUUID == nil || *n.InstanceUUID != a.UUID {
				t.Errorf("node %d: allocation_id %v instance_uuid %v, want %d %s", n.ID, n.AllocationID, deref(n.InstanceUUID), a.ID, a.UUID)
			}
		}
		if active != 10 {
			t.Errorf("%d allocations active, want 10 (one per node)", active)
		}
	})
}

// TestAllocationRPCCapped: a client capped below RPC 1.5 (pinned to
// release 0.2) refuses both allocation methods before sending anything.
func TestAllocationRPCCapped(t *testing.T) {
	h := newHarness(t, nil, "cond-1", nil)
	api := h.cappedAPI("1.4")
	a := &objects.Allocation{UUID: "8f1d9d3a-1c1b-4a47-9d56-0d8c5b9a7e01", ResourceClass: ptr("gold")}
	_, err := api.CreateAllocation(context.Background(), a, nil)
	var ce *rpc.CapError
	if !errors.As(err, &ce) {
		t.Errorf("create_allocation capped at 1.4: %v, want *rpc.CapError", err)
	}
	if err := api.DestroyAllocation(context.Background(), a, nil); !errors.As(err, &ce) {
		t.Errorf("destroy_allocation capped at 1.4: %v", err)
	}
	if _, err := h.store.GetAllocation(context.Background(), a.UUID); err == nil {
		t.Error("a capped create_allocation stored an allocation")
	}
}

// TestOrphanAllocationTakenOver: an allocation a dead conductor left
// allocating is taken over and processed by the orphan check.
func TestOrphanAllocationTakenOver(t *testing.T) {
	h := newHarness(t, nil, "cond-1", nil)
	ctx := context.Background()
	n := h.enroll("o1")
	h.schedulable(n, "gold")
	a := &objects.Allocation{UUID: "2b0c6c1e-5f8e-4c59-9d8c-5a1f7c2d9e10", ResourceClass: ptr("gold"),
		State: objects.AllocationAllocating, ConductorAffinity: ptr(int64(9999)), Extra: map[string]any{}}
	if err := h.store.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	h.svc.checkOrphanAllocations(ctx)
	got := h.settled(a.UUID)
	if got.State != objects.AllocationActive || *got.NodeID != n.ID || *got.ConductorAffinity != h.svc.conductorID.Load() {
		t.Errorf("orphan allocation = %s node %v affinity %v", got.State, got.NodeID, got.ConductorAffinity)
	}
}

// TestInstanceRemovalDeletesAllocation: removing an allocated node's
// instance_uuid deletes its allocation (Ironic's update_node).
func TestInstanceRemovalDeletesAllocation(t *testing.T) {
	h := newHarness(t, nil, "cond-1", nil)
	ctx := context.Background()
	n := h.enroll("i1")
	h.schedulable(n, "gold")
	a := h.allocate(&objects.Allocation{ResourceClass: ptr("gold")})
	if a.State != objects.AllocationActive {
		t.Fatalf("allocation = %s %v", a.State, deref(a.LastError))
	}
	cur := h.node(n.UUID)
	cur.InstanceUUID = nil
	if _, err := h.api.UpdateNode(ctx, cur); err != nil {
		t.Fatal(err)
	}
	if got := h.node(n.UUID); got.AllocationID != nil || got.InstanceUUID != nil {
		t.Errorf("node after update: allocation_id %v instance_uuid %v", got.AllocationID, deref(got.InstanceUUID))
	}
	if _, err := h.store.GetAllocation(ctx, a.UUID); err == nil {
		t.Error("allocation survived the removal of instance_uuid")
	}
}

// TestAllocationTraits: only a node with every requested trait is taken,
// and the traits go to its instance_info.
func TestAllocationTraits(t *testing.T) {
	h := newHarness(t, nil, "cond-1", nil)
	ctx := context.Background()
	plain, gpu := h.enroll("plain"), h.enroll("gpu")
	h.schedulable(plain, "gold")
	h.schedulable(gpu, "gold")
	if err := h.store.SetNodeTraits(ctx, gpu.ID, []string{"CUSTOM_GPU", "HW_CPU_X86_VMX"}); err != nil {
		t.Fatal(err)
	}
	if err := h.store.SetNodeTraits(ctx, plain.ID, []string{"HW_CPU_X86_VMX"}); err != nil {
		t.Fatal(err)
	}
	a := h.allocate(&objects.Allocation{ResourceClass: ptr("gold"), Traits: []string{"CUSTOM_GPU", "HW_CPU_X86_VMX"}})
	if a.State != objects.AllocationActive || *a.NodeID != gpu.ID {
		t.Fatalf("allocation = %s node %v, want the gpu node %d; %v", a.State, a.NodeID, gpu.ID, deref(a.LastError))
	}
	if tr := fmt.Sprint(h.node(gpu.UUID).InstanceInfo["traits"]); tr != "[CUSTOM_GPU HW_CPU_X86_VMX]" {
		t.Errorf("instance_info.traits = %s", tr)
	}
	b := h.allocate(&objects.Allocation{ResourceClass: ptr("gold"), Traits: []string{"CUSTOM_GPU"}})
	if b.State != objects.AllocationError || !strings.HasSuffix(*b.LastError, "no suitable nodes have the requested traits CUSTOM_GPU.") {
		t.Errorf("second allocation = %s %v", b.State, deref(b.LastError))
	}
}

// TestAllocationProcessedOnce: two processings of one allocation at once
// (the start-up resume racing a create's own) leave it active on its node;
// before the guard, the one that found the node taken marked it failed.
func TestAllocationProcessedOnce(t *testing.T) {
	h := newHarness(t, nil, "cond-1", nil)
	ctx := context.Background()
	for i := range 10 {
		n := h.enroll(fmt.Sprintf("once-%d", i))
		h.schedulable(n, "gold")
		a := &objects.Allocation{UUID: uuid.NewString(), ResourceClass: ptr("gold"), State: objects.AllocationAllocating,
			ConductorAffinity: ptr(h.svc.conductorID.Load()), Extra: map[string]any{}}
		if err := h.store.Create(ctx, a); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { h.svc.allocate(ctx, a.ID) })
		}
		wg.Wait()
		if got := h.allocation(a.UUID); got.State != objects.AllocationActive || got.NodeID == nil || *got.NodeID != n.ID {
			t.Fatalf("allocation %d = %s node %v: %v", i, got.State, got.NodeID, deref(got.LastError))
		}
	}
}
