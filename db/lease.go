package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Node locks are leases (ARCHITECTURE §5): a holder, an expiry and a fencing
// epoch on the node row. Taking one is a single conditional UPDATE checked by
// RowsAffected; renewing and releasing are conditioned on holder AND epoch,
// so a holder whose lease lapsed and was taken over can no longer touch it.
// Times come from the database clock (DB.Now).

// NodeLockedError says a node's lease is held by someone else. It matches
// ErrNodeLocked with errors.Is and is retryable.
type NodeLockedError struct {
	Node   string // the node's UUID
	Holder string // the current lease holder
}

// Error gives Ironic's NodeLocked message.
func (e *NodeLockedError) Error() string {
	return fmt.Sprintf("Node %s is locked by host %s, please retry after the current operation is completed.", e.Node, e.Holder)
}

// Is makes errors.Is(err, ErrNodeLocked) true.
func (e *NodeLockedError) Is(target error) bool { return target == ErrNodeLocked }

// Retryable reports that waiting and trying again may succeed.
func (e *NodeLockedError) Retryable() bool { return true }

// acquireAttempts bounds the retries when a lease is released between the
// failed UPDATE and the read that names its holder.
const acquireAttempts = 3

// AcquireLease takes the lease on the node with nodeUUID for holder, for ttl,
// if it is free or its lease has expired. It returns the new fencing epoch,
// which every later RenewLease and ReleaseLease must present. A held lease
// gives a *NodeLockedError, an unknown node an error wrapping ErrNotFound.
// A lease is not re-entrant: a holder acquiring its own live lease is
// refused like anyone else.
func (d *DB) AcquireLease(ctx context.Context, nodeUUID, holder string, ttl time.Duration) (int64, error) {
	if holder == "" || ttl <= 0 {
		return 0, fmt.Errorf("acquire lease on node %s: holder and a positive ttl are required", nodeUUID)
	}
	action := "acquire lease on node " + nodeUUID + " for " + holder
	for range acquireAttempts {
		now, err := d.Now(ctx)
		if err != nil {
			return 0, err
		}
		var epoch int64
		var won bool
		// The UPDATE and the read of the new epoch share a transaction:
		// the row stays locked in between, so the epoch read is ours.
		err = d.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			res, err := tx.NewUpdate().Table(TableNodes).
				Set("reservation = ?", holder).
				Set("reservation_expires_at = ?", now.Add(ttl)).
				Set("reservation_epoch = reservation_epoch + 1").
				Set("updated_at = ?", now).
				Where("uuid = ?", nodeUUID).
				Where("(reservation IS NULL OR reservation_expires_at < ?)", now).
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
		if won {
			return epoch, nil
		}
		var cur sql.NullString
		err = d.bun.NewSelect().Table(TableNodes).Column("reservation").
			Where("uuid = ?", nodeUUID).Scan(ctx, &cur)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return 0, fmt.Errorf("%s: node %s: %w", action, nodeUUID, ErrNotFound)
		case err != nil:
			return 0, d.wrap(err, action)
		case cur.Valid:
			return 0, &NodeLockedError{Node: nodeUUID, Holder: cur.String}
		}
		// Released in between: try again.
	}
	return 0, fmt.Errorf("%s: lease changed hands %d times in a row, giving up: %w", action, acquireAttempts, ErrNodeLocked)
}

// RenewLease extends holder's lease on the node to now+ttl. It succeeds even
// after expiry as long as nobody took the lease over (the epoch is still
// holder's); otherwise it returns an error wrapping ErrLeaseLost and the
// holder must stop acting on the node.
func (d *DB) RenewLease(ctx context.Context, nodeUUID, holder string, epoch int64, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("renew lease on node %s: ttl must be positive", nodeUUID)
	}
	now, err := d.Now(ctx)
	if err != nil {
		return err
	}
	q := d.bun.NewUpdate().Table(TableNodes).
		Set("reservation_expires_at = ?", now.Add(ttl))
	return d.fencedUpdate(ctx, q, "renew", nodeUUID, holder, epoch)
}

// ReleaseLease frees holder's lease on the node. The epoch is kept, so a
// later holder gets a higher one. A lease already lost gives an error
// wrapping ErrLeaseLost.
func (d *DB) ReleaseLease(ctx context.Context, nodeUUID, holder string, epoch int64) error {
	now, err := d.Now(ctx)
	if err != nil {
		return err
	}
	q := d.bun.NewUpdate().Table(TableNodes).
		Set("reservation = NULL").
		Set("reservation_expires_at = NULL").
		Set("updated_at = ?", now)
	return d.fencedUpdate(ctx, q, "release", nodeUUID, holder, epoch)
}

func (d *DB) fencedUpdate(ctx context.Context, q *bun.UpdateQuery, verb, nodeUUID, holder string, epoch int64) error {
	action := fmt.Sprintf("%s lease on node %s for %s (epoch %d)", verb, nodeUUID, holder, epoch)
	res, err := q.Where("uuid = ?", nodeUUID).
		Where("reservation = ?", holder).
		Where("reservation_epoch = ?", epoch).
		Exec(ctx)
	if err != nil {
		return d.wrap(err, action)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return d.wrap(err, action)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", action, ErrLeaseLost)
	}
	return nil
}

// ReleaseLeasesHeldBy frees every lease holder has, whatever its epoch, and
// returns how many. A conductor calls it at start-up (its previous
// incarnation's leases are void, as Ironic's prepare_host) and after a
// graceful shutdown.
func (d *DB) ReleaseLeasesHeldBy(ctx context.Context, holder string) (int64, error) {
	now, err := d.Now(ctx)
	if err != nil {
		return 0, err
	}
	res, err := d.bun.NewUpdate().Table(TableNodes).
		Set("reservation = NULL").
		Set("reservation_expires_at = NULL").
		Set("updated_at = ?", now).
		Where("reservation = ?", holder).
		Exec(ctx)
	if err != nil {
		return 0, d.wrap(err, "release leases held by "+holder)
	}
	n, err := res.RowsAffected()
	return n, d.wrap(err, "release leases held by "+holder)
}
