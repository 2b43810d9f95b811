package conductor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/rivetmetal/rivet/core/conductor/workers"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/pyrepr"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/db"
)

// allocationFailed is Ironic's AllocationFailed: why an allocation could
// not be given a node. Its text is what last_error records.
type allocationFailed struct {
	uuid, reason string
}

func (e *allocationFailed) Error() string {
	return fmt.Sprintf("Failed to process allocation %s: %s.", e.uuid, e.reason)
}

// createAllocation stores a new allocation (state allocating, processed by
// this conductor) and answers it at once; a worker then looks for a node
// (Ironic's do_allocate). With node_id set, the allocation is backfilled
// for that node instead, synchronously (API 1.58): it is answered active,
// or refused with the reason (the allocation is kept, in state error, as
// Ironic keeps it).
func (s *Service) createAllocation(ctx context.Context, p rpc.Params) (any, error) {
	a, err := objectArg[*objects.Allocation](p, "allocation")
	if err != nil {
		return nil, err
	}
	nodeID := a.NodeID
	a.NodeID, a.State = nil, objects.AllocationAllocating
	a.ConductorAffinity = ptr(s.conductorID.Load())
	if a.UUID == "" {
		a.UUID = uuid.NewString()
	}
	if err := s.store.Create(ctx, a); err != nil {
		if db.IsUniqueViolation(err) {
			return nil, s.duplicateAllocation(ctx, a, err)
		}
		return nil, err
	}
	log := s.log.With("allocation", a.UUID, "request_id", rpc.RequestID(ctx))
	if nodeID != nil {
		if err := s.backfillAllocation(ctx, a, *nodeID); err != nil {
			log.Error("allocation backfill failed", "error", err)
			s.allocationFailed(ctx, a, err)
			return nil, err
		}
		log.Info("allocation backfilled", "node", *nodeID)
		return a, nil
	}
	id := a.ID
	if err := s.pool.TryAPI(func() {
		wctx, cancel := s.workContext(ctx)
		defer cancel()
		s.allocate(wctx, id)
	}); err != nil {
		// No worker (NoFreeConductorWorker, 503) or shutting down: nothing
		// will process it, so it is not kept; the client may retry.
		if derr := s.store.Delete(context.WithoutCancel(ctx), a); derr != nil {
			log.Error("could not delete the allocation no worker took", "error", derr)
		}
		if errors.Is(err, workers.ErrClosed) {
			return nil, errShuttingDown(s.cfg.Hostname)
		}
		return nil, err
	}
	return a, nil
}

// duplicateAllocation names what a new allocation collides on.
func (s *Service) duplicateAllocation(ctx context.Context, a *objects.Allocation, err error) error {
	if a.Name != nil {
		if other, gerr := s.store.GetAllocation(ctx, *a.Name); gerr == nil && other.UUID != a.UUID {
			return classed("AllocationDuplicateName", http.StatusConflict, err, "An allocation with name %s already exists.", *a.Name)
		}
	}
	return classed("AllocationAlreadyExists", http.StatusConflict, err, "An allocation with UUID %s already exists.", a.UUID)
}

// allocationFailed records a failed allocation: no node, state error,
// last_error the reason (Ironic's _allocation_failed). One deleted
// meanwhile is left alone.
func (s *Service) allocationFailed(ctx context.Context, a *objects.Allocation, reason error) {
	msg := reason.Error()
	var af *allocationFailed
	var ce *Error
	if !errors.As(reason, &af) && !errors.As(reason, &ce) {
		msg = "Unexpected exception during allocation: " + msg
	}
	a.NodeID, a.State, a.LastError = nil, objects.AllocationError, &msg
	if err := s.store.Save(context.WithoutCancel(ctx), a); err != nil && !errors.Is(err, db.ErrNotFound) {
		s.log.Error("could not save the failed allocation", "allocation", a.UUID, "error", err)
	}
}

// allocate processes the allocation with id: it lists the nodes that
// match, in random order (the one named as the allocation first, API 1.79),
// and reserves the first that still matches under its lease. Locked nodes
// are tried again node_locked_retry_attempts times; two allocations never
// get one node (ReserveNode's condition). An allocation already being
// processed here is left to that processing.
func (s *Service) allocate(ctx context.Context, id int64) {
	if _, busy := s.allocating.LoadOrStore(id, struct{}{}); busy {
		return
	}
	defer s.allocating.Delete(id)
	a, err := s.store.AllocationByID(ctx, id)
	if err != nil {
		if !errors.Is(err, db.ErrNotFound) {
			s.log.Error("could not load the allocation to process", "allocation_id", id, "error", err)
		}
		return
	}
	if a.State != objects.AllocationAllocating {
		return
	}
	log := s.log.With("allocation", a.UUID)
	err = s.allocateNode(ctx, a, log)
	if err == nil || errors.Is(err, db.ErrNotFound) {
		return
	}
	log.Error("allocation failed", "error", err)
	s.allocationFailed(ctx, a, err)
}

func (s *Service) allocateNode(ctx context.Context, a *objects.Allocation, log interface {
	Info(string, ...any)
	Debug(string, ...any)
}) error {
	nodes, err := s.allocationCandidates(ctx, a)
	if err != nil {
		return err
	}
	log.Debug("allocation candidates", "count", len(nodes))
	for attempt := 0; ; attempt++ {
		var retry []db.Candidate
		for _, c := range nodes {
			done, locked, err := s.tryReserve(ctx, a, c)
			if err != nil {
				return err
			}
			if done {
				log.Info("node reserved for allocation", "node", c.UUID)
				return nil
			}
			if locked {
				retry = append(retry, c)
			}
		}
		nodes = retry
		if len(nodes) == 0 {
			return &allocationFailed{a.UUID, "all nodes were filtered out during reservation"}
		}
		if attempt >= s.cfg.LockRetryAttempts {
			return &allocationFailed{a.UUID, fmt.Sprintf("could not reserve any of %d suitable nodes", len(nodes))}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.cfg.LockRetryInterval):
		}
	}
}

// allocationCandidates lists the nodes a may take (with every trait a
// asks, from the node traits of API 1.37), shuffled, a node named as the
// allocation first (Ironic's _candidate_nodes).
func (s *Service) allocationCandidates(ctx context.Context, a *objects.Allocation) ([]db.Candidate, error) {
	rc := ""
	if a.ResourceClass != nil {
		rc = *a.ResourceClass
	}
	f := db.AllocationFilter{ResourceClass: rc, Owner: a.Owner}
	if len(a.CandidateNodes) > 0 {
		f.UUIDs = a.CandidateNodes
	}
	nodes, err := s.db.AllocationCandidates(ctx, f)
	if err != nil {
		return nil, err
	}
	if len(nodes) == 0 {
		if len(a.CandidateNodes) > 0 {
			return nil, &allocationFailed{a.UUID, "none of the requested nodes are available and match the resource class " + rc}
		}
		return nil, &allocationFailed{a.UUID, "no available nodes match the resource class " + rc}
	}
	if len(a.Traits) > 0 {
		ids := make([]int64, len(nodes))
		for i, n := range nodes {
			ids[i] = n.ID
		}
		traits, err := s.store.TraitsOfNodes(ctx, ids)
		if err != nil {
			return nil, err
		}
		nodes = slices.DeleteFunc(nodes, func(n db.Candidate) bool { return !hasTraits(traits[n.ID], a.Traits) })
		if len(nodes) == 0 {
			return nil, &allocationFailed{a.UUID, "no suitable nodes have the requested traits " + strings.Join(unique(a.Traits), ", ")}
		}
	}
	rand.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
	if a.Name != nil {
		if i := slices.IndexFunc(nodes, func(n db.Candidate) bool { return n.Name != nil && *n.Name == *a.Name }); i > 0 {
			n := nodes[i]
			nodes = slices.Insert(slices.Delete(nodes, i, i+1), 0, n)
		}
	}
	return nodes, nil
}

// tryReserve takes c's lease without waiting and reserves it for a if it
// still matches (Ironic's _verify_node). locked: someone else held it.
func (s *Service) tryReserve(ctx context.Context, a *objects.Allocation, c db.Candidate) (done, locked bool, err error) {
	t, err := s.tasks.TryAcquire(ctx, c.UUID, "allocating")
	var le *db.NodeLockedError
	switch {
	case errors.As(err, &le):
		return false, true, nil
	case errors.Is(err, db.ErrNotFound):
		return false, false, nil
	case err != nil:
		return false, false, err
	}
	defer t.Release(ctx)
	n := t.Node
	if ok, err := s.stillMatches(ctx, n, a); err != nil || !ok {
		return false, false, err
	}
	err = s.reserve(ctx, t, a)
	if errors.Is(err, db.ErrNodeAssociated) {
		return false, false, nil
	}
	return err == nil, false, err
}

// stillMatches re-checks a node under its lease.
func (s *Service) stillMatches(ctx context.Context, n *objects.Node, a *objects.Allocation) (bool, error) {
	if n.Maintenance || n.InstanceUUID != nil || n.AllocationID != nil || n.ProvisionState != string(states.Available) ||
		n.ResourceClass == nil || a.ResourceClass == nil || *n.ResourceClass != *a.ResourceClass {
		return false, nil
	}
	if len(a.Traits) == 0 {
		return true, nil
	}
	traits, err := s.store.TraitsOfNodes(ctx, []int64{n.ID})
	return hasTraits(traits[n.ID], a.Traits), err
}

// reserve gives t's node to a: node_id and state active on the allocation,
// allocation_id, instance_uuid (the allocation's UUID) and
// instance_info.traits on the node, in one transaction.
func (s *Service) reserve(ctx context.Context, t *Task, a *objects.Allocation) error {
	n := t.Node
	info := maps.Clone(n.InstanceInfo)
	if info == nil {
		info = map[string]any{}
	}
	traits := make([]any, len(a.Traits))
	for i, tr := range a.Traits {
		traits[i] = tr
	}
	info["traits"] = traits
	n.AllocationID, n.InstanceUUID, n.InstanceInfo = ptr(a.ID), ptr(a.UUID), info
	a.NodeID, a.State = ptr(n.ID), objects.AllocationActive
	err := s.store.ReserveNode(ctx, a, n, s.cfg.Hostname, t.epoch)
	if errors.Is(err, db.ErrInstanceAssociated) {
		return classed("InstanceAssociated", http.StatusConflict, err,
			"Instance %s is already associated with a node, it cannot be associated with this other node %s", a.UUID, n.UUID)
	}
	return err
}

// backfillAllocation gives a the already deployed node with id nodeID
// (Ironic's backfill_allocation): the node must be active and match what
// the allocation asks.
func (s *Service) backfillAllocation(ctx context.Context, a *objects.Allocation, nodeID int64) error {
	nodeUUID, err := s.nodeByID(ctx, nodeID)
	if err != nil {
		return err
	}
	t, err := s.tasks.Acquire(ctx, nodeUUID, "allocation backfilling")
	if err != nil {
		return err
	}
	defer t.Release(ctx)
	n := t.Node
	var problems []string
	if n.ProvisionState != string(states.Active) {
		problems = append(problems, fmt.Sprintf(`Node must be in the "active" state, but the current state is "%s"`, n.ProvisionState))
	}
	if a.ResourceClass != nil && (n.ResourceClass == nil || *n.ResourceClass != *a.ResourceClass) {
		problems = append(problems, fmt.Sprintf("Resource class %s does not match the requested resource class %s",
			pyStr(n.ResourceClass), *a.ResourceClass))
	}
	if len(a.Traits) > 0 {
		traits, err := s.store.TraitsOfNodes(ctx, []int64{n.ID})
		if err != nil {
			return err
		}
		if !hasTraits(traits[n.ID], a.Traits) {
			problems = append(problems, fmt.Sprintf("List of traits %s does not match the requested traits %s",
				pyrepr.Value(traits[n.ID]), pyrepr.Value(a.Traits)))
		}
	}
	if len(a.CandidateNodes) > 0 && !slices.Contains(a.CandidateNodes, n.UUID) {
		problems = append(problems, fmt.Sprintf("Candidate nodes must be empty or contain the target node, but got %s", pyrepr.Value(a.CandidateNodes)))
	}
	if len(problems) > 0 {
		return classed("AllocationFailed", http.StatusBadRequest, nil, "%s",
			(&allocationFailed{a.UUID, fmt.Sprintf("Cannot backfill an allocation for node %s: %s", n.UUID, strings.Join(problems, "; "))}).Error())
	}
	err = s.reserve(ctx, t, a)
	if errors.Is(err, db.ErrNodeAssociated) {
		inst := ""
		if n.InstanceUUID != nil {
			inst = *n.InstanceUUID
		}
		return classed("NodeAssociated", http.StatusConflict, err, "Node %s is associated with instance %s.", n.UUID, inst)
	}
	return err
}

// destroyAllocation deletes an allocation, freeing its node (Ironic's
// destroy_allocation): under the node's lease, refused while the node is
// active or moving between states, unless in maintenance.
func (s *Service) destroyAllocation(ctx context.Context, p rpc.Params) (any, error) {
	in, err := objectArg[*objects.Allocation](p, "allocation")
	if err != nil {
		return nil, err
	}
	a, err := s.store.AllocationByID(ctx, in.ID)
	if errors.Is(err, db.ErrNotFound) {
		return nil, errAllocationNotFound(in.UUID, err)
	}
	if err != nil {
		return nil, err
	}
	if a.NodeID != nil {
		nodeUUID, err := s.nodeByID(ctx, *a.NodeID)
		if err == nil {
			t, err := s.tasks.Acquire(ctx, nodeUUID, "allocation deletion")
			if err != nil {
				return nil, err
			}
			defer t.Release(ctx)
			if err := verifyDeallocation(t.Node, a); err != nil {
				return nil, err
			}
		}
	}
	if err := s.store.DestroyAllocation(ctx, a); err != nil {
		if errors.Is(err, db.ErrNotFound) {
			return nil, errAllocationNotFound(a.UUID, err)
		}
		return nil, err
	}
	s.log.Info("allocation deleted", "allocation", a.UUID, "request_id", rpc.RequestID(ctx))
	return nil, nil
}

// verifyDeallocation is Ironic's verify_node_for_deallocation.
func verifyDeallocation(n *objects.Node, a *objects.Allocation) error {
	if n.Maintenance {
		return nil
	}
	if n.TargetProvisionState != nil && !states.UpdateAllowed[states.State(n.ProvisionState)] {
		return errInvalidState("Cannot remove allocation %s for node %s, because the node is in state %s where updates are not allowed (and maintenance mode is off)",
			a.UUID, n.UUID, n.ProvisionState)
	}
	if n.ProvisionState == string(states.Active) {
		return errInvalidState("Cannot remove allocation %s for node %s, because the node is active (and maintenance mode is off)", a.UUID, n.UUID)
	}
	return nil
}

func errAllocationNotFound(ident string, err error) *Error {
	return classed("AllocationNotFound", http.StatusNotFound, err, "Allocation %s could not be found.", ident)
}

// removeNodeAllocation deletes the allocation of t's node, if any, and
// clears it from the node in memory (the database row is cleared by
// DestroyAllocation): on tear down, and when instance_uuid is removed.
func (s *Service) removeNodeAllocation(ctx context.Context, t *Task) error {
	n := t.Node
	if n.AllocationID == nil {
		return nil
	}
	a, err := s.store.AllocationByID(ctx, *n.AllocationID)
	if err == nil {
		err = s.store.DestroyAllocation(ctx, a)
	}
	if err != nil && !errors.Is(err, db.ErrNotFound) {
		return err
	}
	n.AllocationID, n.InstanceUUID = nil, nil
	return nil
}

// resumeAllocations processes again the allocations this conductor left
// in state allocating when it stopped (Ironic's _resume_allocations).
func (s *Service) resumeAllocations(ctx context.Context) {
	ids, err := s.db.AllocationsAllocating(ctx, s.conductorID.Load())
	if err != nil {
		s.log.Error("could not list the allocations to resume", "error", err)
		return
	}
	for _, id := range ids {
		s.allocate(ctx, id)
	}
}

// hasTraits reports whether have holds every trait of want.
func hasTraits(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

func unique(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// pyStr renders a nullable string as Python's %s does (None for nil).
func pyStr(s *string) string {
	if s == nil {
		return "None"
	}
	return *s
}

// instanceRemoved deletes the node's allocation when an update removed
// its instance_uuid (Ironic's update_node): allowed in the states where
// update_node lets the resource class change, or in maintenance;
// InvalidState otherwise.
func (s *Service) instanceRemoved(ctx context.Context, t *Task, applied []string) error {
	n := t.Node
	if !slices.Contains(applied, "instance_uuid") || n.InstanceUUID != nil || n.AllocationID == nil {
		return nil
	}
	allowed := []states.State{states.Enroll, states.Inspecting, states.InspectWait, states.Manageable, states.Available}
	if !n.Maintenance && !slices.Contains(allowed, states.State(n.ProvisionState)) {
		names := make([]string, len(allowed))
		for i, st := range allowed {
			names[i] = string(st)
		}
		return errInvalidState("Node %s with an allocation can not have instance_uuid removed unless it is in one of allowed (%s) states or in maintenance mode. Current state is '%s'.",
			n.UUID, strings.Join(names, ", "), n.ProvisionState)
	}
	return s.removeNodeAllocation(ctx, t)
}

// checkOrphanAllocations takes over the allocations that conductors no
// longer alive left allocating, and processes them (Ironic's
// _check_orphan_allocations, run with the takeover check).
func (s *Service) checkOrphanAllocations(ctx context.Context) {
	live, err := s.db.LiveConductors(ctx, s.cfg.HeartbeatTimeout)
	if err != nil {
		s.log.Error("orphan allocations: listing live conductors failed", "error", err)
		return
	}
	ids := []int64{s.conductorID.Load()}
	for _, c := range live {
		ids = append(ids, c.ID)
	}
	orphans, err := s.db.OrphanAllocations(ctx, ids)
	if err != nil {
		s.log.Error("orphan allocations check failed", "error", err)
		return
	}
	for id, from := range orphans {
		if ctx.Err() != nil || s.draining.Load() {
			return
		}
		took, err := s.db.TakeOverAllocation(ctx, id, from, s.conductorID.Load())
		if err != nil {
			s.log.Error("taking over an allocation failed", "allocation_id", id, "error", err)
			continue
		}
		if took {
			s.log.Info("took over an allocation from a conductor that is gone", "allocation_id", id, "conductor_id", from)
			s.allocate(ctx, id)
		}
	}
}
