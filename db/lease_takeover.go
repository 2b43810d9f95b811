package db

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/uptrace/bun"
)

// TakeOverLease moves the lease on a node from deadHolder to holder when
// deadHolder's lease has expired or deadHolder's heartbeat is older than
// liveTimeout (database clock). The online flag does not matter: a
// conductor draining at shutdown is offline but still heartbeats while it
// finishes its work, and keeps its leases (Ironic's get_offline_conductors). The liveness check is part of the conditional UPDATE, so a
// conductor that came back in between keeps its lease. A holder never takes
// over its own lease. It returns the new fencing epoch; a lease that is not
// (or no longer) takeable gives a *NodeLockedError.
func (d *DB) TakeOverLease(ctx context.Context, nodeUUID, deadHolder, holder string, ttl, liveTimeout time.Duration) (int64, error) {
	action := fmt.Sprintf("take over lease on node %s from %s for %s", nodeUUID, deadHolder, holder)
	if holder == "" || deadHolder == "" || ttl <= 0 {
		return 0, fmt.Errorf("%s: holders and a positive ttl are required", action)
	}
	if deadHolder == holder {
		return 0, &NodeLockedError{Node: nodeUUID, Holder: holder}
	}
	now, err := d.Now(ctx)
	if err != nil {
		return 0, err
	}
	var epoch int64
	won := false
	err = d.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		live := tx.NewSelect().Table(TableConductors).ColumnExpr("1").
			Where("? = ?", bun.Ident("hostname"), deadHolder).
			Where("? > ?", bun.Ident("updated_at"), now.Add(-liveTimeout))
		res, err := tx.NewUpdate().Table(TableNodes).
			Set("reservation = ?", holder).
			Set("reservation_expires_at = ?", now.Add(ttl)).
			Set("reservation_epoch = reservation_epoch + 1").
			Set("updated_at = ?", now).
			Where("uuid = ?", nodeUUID).
			Where("reservation = ?", deadHolder).
			Where("(reservation_expires_at < ? OR NOT EXISTS (?))", now, live).
			Exec(ctx)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return err
		}
		won = true
		return tx.NewSelect().Table(TableNodes).Column("reservation_epoch").
			Where("uuid = ?", nodeUUID).Scan(ctx, &epoch)
	})
	if err != nil {
		return 0, d.wrap(err, action)
	}
	if !won {
		return 0, &NodeLockedError{Node: nodeUUID, Holder: deadHolder}
	}
	return epoch, nil
}

// OrphanQuery selects the nodes a conductor looks at in its takeover
// periodic, before it filters them by the hash ring.
type OrphanQuery struct {
	// Self is the asking conductor's hostname, SelfID its conductors id.
	Self   string
	SelfID int64
	// Group and Drivers restrict the nodes to those the conductor serves.
	Group   string
	Drivers []string
	// Live lists the live conductors' hostnames (Self included).
	Live []string
	// Unleased lists provision states in which a node without a lease is
	// orphaned (work that always runs under a lease).
	Unleased []string
	// Active is the provision state of deployed nodes, re-adopted when
	// their conductor_affinity is not SelfID.
	Active string
}

// OrphanCandidates lists the nodes of q's group and drivers that need a
// conductor: leased by another conductor that is not live, or under an
// expired lease (Self's too: a lease Self could not release, the database
// being down at that moment, is left behind by a task that has ended; the
// caller skips the nodes it still works on), or free but in one of
// q.Unleased, or active with another conductor's affinity, or free with a
// target_power_state left behind.
func (d *DB) OrphanCandidates(ctx context.Context, q OrphanQuery) ([]Node, error) {
	if len(q.Drivers) == 0 {
		return nil, nil
	}
	now, err := d.Now(ctx)
	if err != nil {
		return nil, err
	}
	live := slices.Clone(q.Live)
	if !slices.Contains(live, q.Self) {
		live = append(live, q.Self)
	}
	var out []Node
	err = d.bun.NewSelect().Model(&out).
		Where("LOWER(n.conductor_group) = ?", strings.ToLower(q.Group)).
		Where("n.driver IN (?)", bun.In(q.Drivers)).
		WhereGroup(" AND ", func(sq *bun.SelectQuery) *bun.SelectQuery {
			return sq.
				Where("(n.reservation IS NOT NULL AND (n.reservation_expires_at < ? OR (n.reservation <> ? AND n.reservation NOT IN (?))))",
					now, q.Self, bun.In(live)).
				WhereOr("(n.reservation IS NULL AND n.provision_state IN (?))", bun.In(orEmpty(q.Unleased))).
				WhereOr("(n.reservation IS NULL AND n.provision_state = ? AND (n.conductor_affinity IS NULL OR n.conductor_affinity <> ?))", q.Active, q.SelfID).
				WhereOr("(n.reservation IS NULL AND n.target_power_state IS NOT NULL)")
		}).
		OrderExpr("n.id ASC").
		Scan(ctx)
	if err != nil {
		return nil, d.wrap(err, "list orphaned nodes for "+q.Self)
	}
	return out, nil
}

func orEmpty(s []string) []string {
	if len(s) == 0 {
		return []string{""}
	}
	return s
}

// SaveFenced is Save conditioned on the lease: the row is written only if
// holder still holds the node's lease at epoch, so a conductor whose lease
// was taken over can never overwrite the new holder's work. A lost lease is
// an error wrapping ErrLeaseLost. obj must be a Node.
func (s *Store) SaveFenced(ctx context.Context, obj objects.Object, holder string, epoch int64) error {
	return s.saveNodeIf(ctx, obj, fmt.Sprintf("save Node under lease of %s (epoch %d)", holder, epoch),
		func(q *bun.UpdateQuery) *bun.UpdateQuery {
			return q.Where("reservation = ?", holder).Where("reservation_epoch = ?", epoch)
		})
}

// SaveUnleased writes a node's changed fields as a lease of no duration
// would: only if nobody holds the node's lease and its epoch is still
// epoch, the one read with the node (GetNodeEpoch). Every lease taken
// since bumped the epoch, so nothing written under a lease in between
// is overwritten; otherwise nothing is written and the error wraps
// ErrLeaseLost. A write that would hold the lease for itself alone (an
// agent's heartbeat) so spares the statements taking and giving back the
// lease, and the node's second read.
func (s *Store) SaveUnleased(ctx context.Context, obj objects.Object, epoch int64) error {
	return s.saveNodeIf(ctx, obj, fmt.Sprintf("save unleased Node (epoch %d)", epoch),
		func(q *bun.UpdateQuery) *bun.UpdateQuery {
			return q.Where("reservation IS NULL").Where("reservation_epoch = ?", epoch)
		})
}

// GetNodeEpoch is GetNode with the node's lease epoch as read, for
// SaveUnleased.
func (s *Store) GetNodeEpoch(ctx context.Context, ident string) (*objects.Node, int64, error) {
	col := "name"
	if looksLikeUUID(ident) {
		col = "uuid"
	}
	row, err := s.loadNodeBy(ctx, col, ident)
	if err != nil {
		return nil, 0, err
	}
	obj, err := s.fromRow("Node", row)
	if err != nil {
		return nil, 0, err
	}
	return obj.(*objects.Node), row.ReservationEpoch, nil
}

// saveNodeIf writes obj's changed fields where cond holds of its row.
func (s *Store) saveNodeIf(ctx context.Context, obj objects.Object, action string, cond func(*bun.UpdateQuery) *bun.UpdateQuery) error {
	if obj.Kind() != "Node" {
		return fmt.Errorf("db: %s: %s has no lease", action, obj.Kind())
	}
	row, changed, target, err := s.forDB(obj, true)
	if err != nil {
		return err
	}
	cols := slices.DeleteFunc(changed, func(c string) bool {
		return slices.Contains(leaseColumns, c) || c == "id" || c == "created_at" || c == "updated_at"
	})
	cols = append(cols, "version", "updated_at")
	res, err := cond(s.db.bun.NewUpdate().Model(row).Column(cols...).WherePK()).Exec(ctx)
	if err != nil {
		return s.db.wrap(err, action)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.db.wrap(err, action)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", action, ErrLeaseLost)
	}
	return s.afterWrite(obj, row, target)
}

// WaitingSince lists the free nodes of group and drivers in state whose
// provision_updated_at is before before (callback timeouts).
func (d *DB) WaitingSince(ctx context.Context, group string, drivers []string, state string, before time.Time) ([]Node, error) {
	return d.waitingSince(ctx, group, drivers, state, "provision_updated_at", before)
}

// InspectingSince lists the unleased nodes of group and drivers in state
// whose inspection started before before (Ironic's
// inspection_started_before filter).
func (d *DB) InspectingSince(ctx context.Context, group string, drivers []string, state string, before time.Time) ([]Node, error) {
	return d.waitingSince(ctx, group, drivers, state, "inspection_started_at", before)
}

func (d *DB) waitingSince(ctx context.Context, group string, drivers []string, state, column string, before time.Time) ([]Node, error) {
	if len(drivers) == 0 {
		return nil, nil
	}
	var out []Node
	err := d.bun.NewSelect().Model(&out).
		Where("LOWER(n.conductor_group) = ?", strings.ToLower(group)).
		Where("n.driver IN (?)", bun.In(drivers)).
		Where("n.reservation IS NULL").
		Where("n.provision_state = ?", state).
		Where("n.? < ?", bun.Ident(column), before).
		OrderExpr("n.id ASC").
		Scan(ctx)
	if err != nil {
		return nil, d.wrap(err, "list nodes waiting in "+state)
	}
	return out, nil
}
