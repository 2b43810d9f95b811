package db

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/rivetmetal/rivet/core/clock"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/uptrace/bun"
)

var (
	// ErrNodeAssociated: the node is already reserved for another instance
	// or allocation (Ironic's NodeAssociated).
	ErrNodeAssociated = errors.New("node already associated")
	// ErrInstanceAssociated: another node carries the allocation's UUID as
	// its instance_uuid (Ironic's InstanceAssociated).
	ErrInstanceAssociated = errors.New("instance already associated")
)

// GetAllocation returns the allocation whose UUID or name is ident.
func (s *Store) GetAllocation(ctx context.Context, ident string) (*objects.Allocation, error) {
	col := "name"
	if looksLikeUUID(ident) {
		col = "uuid"
	}
	return s.loadAllocation(ctx, func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.? = ?", bun.Ident(col), ident) })
}

// AllocationByID returns the allocation with primary key id.
func (s *Store) AllocationByID(ctx context.Context, id int64) (*objects.Allocation, error) {
	return s.loadAllocation(ctx, func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.id = ?", id) })
}

func (s *Store) loadAllocation(ctx context.Context, where func(*bun.SelectQuery) *bun.SelectQuery) (*objects.Allocation, error) {
	obj, err := s.Load(ctx, "Allocation", where)
	if err != nil {
		return nil, err
	}
	return obj.(*objects.Allocation), nil
}

// AllocationFilter selects the nodes an allocation may take (Ironic's
// _candidate_nodes filters): available, not in maintenance, not associated
// with an instance or allocation, with a power state, of ResourceClass,
// among UUIDs when given, owned or leased by Owner when given.
type AllocationFilter struct {
	ResourceClass string
	UUIDs         []string
	Owner         *string
}

// Candidate is a node an allocation may take.
type Candidate struct {
	ID   int64   `bun:"id"`
	UUID string  `bun:"uuid"`
	Name *string `bun:"name"`
}

// AllocationCandidates lists the nodes matching f, by id.
func (d *DB) AllocationCandidates(ctx context.Context, f AllocationFilter) ([]Candidate, error) {
	var out []Candidate
	q := d.bun.NewSelect().Table(TableNodes).Column("id", "uuid", "name").
		Where("resource_class = ?", f.ResourceClass).
		Where("provision_state = ?", "available").
		Where("instance_uuid IS NULL").
		Where("allocation_id IS NULL").
		Where("power_state IS NOT NULL").
		Where("maintenance = ?", false).
		OrderExpr("id ASC")
	if f.UUIDs != nil {
		if len(f.UUIDs) == 0 {
			return nil, nil
		}
		q = q.Where("uuid IN (?)", bun.In(f.UUIDs))
	}
	if f.Owner != nil {
		// Ironic's "project" filter: the node's owner or lessee. A schema
		// without those columns has no owned node, so nothing matches.
		var cols []string
		for _, c := range []string{"owner", "lessee"} {
			if nodeHasColumn(d, c) {
				cols = append(cols, c)
			}
		}
		if len(cols) == 0 {
			return nil, nil
		}
		q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			for _, c := range cols {
				q = q.WhereOr("? = ?", bun.Ident(c), *f.Owner)
			}
			return q
		})
	}
	if err := q.Scan(ctx, &out); err != nil {
		return nil, d.wrap(err, "list allocation candidates")
	}
	return out, nil
}

// nodeHasColumn reports whether the Node row model maps column.
func nodeHasColumn(d *DB, column string) bool {
	_, ok := d.bun.Table(reflect.TypeOf(Node{})).FieldMap[column]
	return ok
}

// traitsTable caches, per database, whether node_traits exists.
var traitsTable sync.Map // *DB → bool

// NodeTraits returns the traits of the nodes ids. A database without the
// node_traits table has none: every node has no trait.
func (d *DB) NodeTraits(ctx context.Context, ids []int64) (map[int64][]string, error) {
	out := map[int64][]string{}
	if len(ids) == 0 {
		return out, nil
	}
	has, ok := traitsTable.Load(d)
	if !ok || !has.(bool) {
		found, err := d.HasTable(ctx, TableNodeTraits)
		if err != nil {
			return nil, err
		}
		if found {
			traitsTable.Store(d, true)
		}
		if !found {
			return out, nil
		}
	}
	var rows []struct {
		NodeID int64  `bun:"node_id"`
		Trait  string `bun:"trait"`
	}
	if err := d.bun.NewSelect().Table(TableNodeTraits).Column("node_id", "trait").
		Where("node_id IN (?)", bun.In(ids)).Scan(ctx, &rows); err != nil {
		return nil, d.wrap(err, "list node traits")
	}
	for _, r := range rows {
		out[r.NodeID] = append(out[r.NodeID], r.Trait)
	}
	return out, nil
}

// ReserveNode records in one transaction that allocation a took node n:
// the caller set a's node_id and state and n's allocation_id,
// instance_uuid and instance_info. The node is written only while holder
// holds its lease at epoch (else ErrLeaseLost) and only if no instance or
// other allocation took it meanwhile (ErrNodeAssociated); an allocation
// deleted meanwhile is ErrNotFound; another node having the allocation's
// UUID as instance is ErrInstanceAssociated. Nothing is written on error.
func (s *Store) ReserveNode(ctx context.Context, a *objects.Allocation, n *objects.Node, holder string, epoch int64) error {
	nrow, ncols, ntarget, err := s.forDB(n, true)
	if err != nil {
		return err
	}
	arow, acols, atarget, err := s.forDB(a, true)
	if err != nil {
		return err
	}
	ncols = append(slices.DeleteFunc(ncols, func(c string) bool {
		return slices.Contains(leaseColumns, c) || c == "id" || c == "created_at" || c == "updated_at"
	}), "version", "updated_at")
	acols = append(slices.DeleteFunc(acols, func(c string) bool { return c == "id" || c == "created_at" || c == "updated_at" }),
		"version", "updated_at")
	action := fmt.Sprintf("reserve node %s for allocation %s", n.UUID, a.UUID)
	var why error
	err = s.db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model(nrow).Column(ncols...).WherePK().
			Where("reservation = ?", holder).Where("reservation_epoch = ?", epoch).
			Where("allocation_id IS NULL").
			WhereGroup(" AND ", func(q *bun.UpdateQuery) *bun.UpdateQuery {
				return q.Where("instance_uuid IS NULL").WhereOr("instance_uuid = ?", a.UUID)
			}).Exec(ctx)
		if err != nil {
			return err
		}
		if k, err := res.RowsAffected(); err != nil {
			return err
		} else if k == 0 {
			why = ErrLeaseLost
			var cur Node
			if err := tx.NewSelect().Model(&cur).Column("reservation", "reservation_epoch", "instance_uuid", "allocation_id").
				Where("id = ?", n.ID).Scan(ctx); err == nil && cur.Reservation != nil && *cur.Reservation == holder &&
				cur.ReservationEpoch == epoch {
				why = ErrNodeAssociated
			}
			return why
		}
		res, err = tx.NewUpdate().Model(arow).Column(acols...).WherePK().Exec(ctx)
		if err != nil {
			return err
		}
		if k, err := res.RowsAffected(); err != nil {
			return err
		} else if k == 0 {
			why = ErrNotFound
			return why
		}
		return nil
	})
	switch {
	case why != nil:
		return fmt.Errorf("%s: %w", action, why)
	case IsUniqueViolation(err):
		return fmt.Errorf("%s: %w", action, ErrInstanceAssociated)
	case err != nil:
		return s.db.wrap(err, action)
	}
	if err := s.afterWrite(n, nrow, ntarget); err != nil {
		return err
	}
	return s.afterWrite(a, arow, atarget)
}

// DestroyAllocation deletes allocation a and frees the node it reserved
// (allocation_id and instance_uuid cleared), in one transaction; a row
// already gone is ErrNotFound.
func (s *Store) DestroyAllocation(ctx context.Context, a *objects.Allocation) error {
	action := "destroy allocation " + a.UUID
	gone := false
	err := s.db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewUpdate().Table(TableNodes).Set("allocation_id = NULL").Set("instance_uuid = NULL").
			Set("updated_at = ?", clock.Now()).Where("allocation_id = ?", a.ID).Exec(ctx); err != nil {
			return err
		}
		res, err := tx.NewDelete().Table(TableAllocations).Where("id = ?", a.ID).Exec(ctx)
		if err != nil {
			return err
		}
		if k, err := res.RowsAffected(); err != nil {
			return err
		} else if k == 0 {
			gone = true
		}
		return nil
	})
	if err != nil {
		return s.db.wrap(err, action)
	}
	if gone {
		return fmt.Errorf("%s: %w", action, ErrNotFound)
	}
	return nil
}

// AllocationsAllocating lists the ids of the allocations in state
// allocating that conductor conductorID processes.
func (d *DB) AllocationsAllocating(ctx context.Context, conductorID int64) ([]int64, error) {
	var ids []int64
	err := d.bun.NewSelect().Table(TableAllocations).Column("id").
		Where("state = ?", objects.AllocationAllocating).Where("conductor_affinity = ?", conductorID).
		OrderExpr("id ASC").Scan(ctx, &ids)
	if err != nil {
		return nil, d.wrap(err, "list allocations to resume")
	}
	return ids, nil
}

// OrphanAllocations lists the ids and conductors of the allocations left
// allocating by a conductor not among live (ids of live conductors).
func (d *DB) OrphanAllocations(ctx context.Context, live []int64) (map[int64]int64, error) {
	var rows []struct {
		ID       int64  `bun:"id"`
		Affinity *int64 `bun:"conductor_affinity"`
	}
	q := d.bun.NewSelect().Table(TableAllocations).Column("id", "conductor_affinity").
		Where("state = ?", objects.AllocationAllocating).Where("conductor_affinity IS NOT NULL")
	if len(live) > 0 {
		q = q.Where("conductor_affinity NOT IN (?)", bun.In(live))
	}
	if err := q.OrderExpr("id ASC").Scan(ctx, &rows); err != nil {
		return nil, d.wrap(err, "list orphan allocations")
	}
	out := make(map[int64]int64, len(rows))
	for _, r := range rows {
		out[r.ID] = *r.Affinity
	}
	return out, nil
}

// TakeOverAllocation moves an allocation still allocating from conductor
// from to conductor to; false when another conductor took it first or it
// moved on (Ironic's take_over_allocation).
func (d *DB) TakeOverAllocation(ctx context.Context, id, from, to int64) (bool, error) {
	res, err := d.bun.NewUpdate().Table(TableAllocations).Set("conductor_affinity = ?", to).
		Set("updated_at = ?", clock.Now()).
		Where("id = ?", id).Where("conductor_affinity = ?", from).Where("state = ?", objects.AllocationAllocating).Exec(ctx)
	if err != nil {
		return false, d.wrap(err, "take over allocation")
	}
	n, err := res.RowsAffected()
	return n == 1, d.wrap(err, "take over allocation")
}
