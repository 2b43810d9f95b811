package db

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rivetmetal/rivet/core/keyring"
	"github.com/uptrace/bun"
)

// DefaultRotateBatch is how many nodes RotateCredentials rewrites per
// transaction when the caller gives no batch size.
const DefaultRotateBatch = 100

// rotateRetries bounds how often one node is retried when concurrent writes
// keep changing its driver_info under RotateCredentials.
const rotateRetries = 5

// RotateProgress is where a credential rotation stands.
type RotateProgress struct {
	// Total is the number of nodes when the rotation started.
	Total int
	// Scanned counts nodes looked at so far.
	Scanned int
	// Rewritten counts nodes whose driver_info was re-encrypted.
	Rewritten int
	// Raced counts rewrites that lost to a concurrent write and were retried.
	Raced int
}

// RotateCredentials re-encrypts, with keys' current key, every secret value
// of node driver_info that is sealed with another key or not sealed at all
// (stored before a key was configured). It runs online: nodes are read in
// id order, batch at a time, and each batch is written in one transaction
// whose updates are conditional on driver_info still holding the text that
// was read, so a concurrent Save is never overwritten (a node that changed
// is read again and retried). Only driver_info is written; updated_at and
// the version are left alone. It is idempotent; progress, when not nil, is
// called after each batch.
func (d *DB) RotateCredentials(ctx context.Context, keys *keyring.Keyring, batch int, progress func(RotateProgress)) (RotateProgress, error) {
	if keys == nil {
		return RotateProgress{}, fmt.Errorf("db: rotate credentials: no credential key configured")
	}
	if batch <= 0 {
		batch = DefaultRotateBatch
	}
	var p RotateProgress
	total, err := d.bun.NewSelect().Model((*Node)(nil)).Count(ctx)
	if err != nil {
		return p, d.wrap(err, "count nodes to rotate")
	}
	p.Total = int(total)
	var after int64
	for {
		var rows []credentialRow
		err := d.bun.NewSelect().Table(TableNodes).Column("id", "uuid", "driver_info").
			Where("id > ?", after).OrderExpr("id").Limit(int64(batch)).Scan(ctx, &rows)
		if err != nil {
			return p, d.wrap(err, "read nodes to rotate")
		}
		if len(rows) == 0 {
			return p, nil
		}
		after = rows[len(rows)-1].ID
		if err := d.rotateBatch(ctx, keys, rows, &p); err != nil {
			return p, err
		}
		p.Scanned += len(rows)
		if progress != nil {
			progress(p)
		}
	}
}

// credentialRow is the part of a node row a rotation reads: driver_info
// as the stored text, which its conditional update compares against.
type credentialRow struct {
	ID         int64   `bun:"id"`
	UUID       string  `bun:"uuid"`
	DriverInfo *string `bun:"driver_info"`
}

// rotateBatch rewrites the stale rows of one batch, retrying rows a
// concurrent write changed until they are current or gone.
func (d *DB) rotateBatch(ctx context.Context, keys *keyring.Keyring, rows []credentialRow, p *RotateProgress) error {
	for attempt := 0; len(rows) > 0; attempt++ {
		if attempt > rotateRetries {
			return fmt.Errorf("db: rotate credentials: node %s keeps changing under concurrent writes; run rotate-key again", rows[0].UUID)
		}
		type update struct {
			row     credentialRow
			newText string
		}
		var updates []update
		for _, r := range rows {
			text, stale, err := resealed(keys, r)
			if err != nil {
				return err
			}
			if stale {
				updates = append(updates, update{r, text})
			}
		}
		if len(updates) == 0 {
			return nil
		}
		var raced []int64
		err := d.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			raced = raced[:0]
			for _, u := range updates {
				res, err := tx.NewUpdate().Table(TableNodes).Set("driver_info = ?", u.newText).
					Where("id = ?", u.row.ID).Where("driver_info = ?", *u.row.DriverInfo).Exec(ctx)
				if err != nil {
					return err
				}
				if n, err := res.RowsAffected(); err != nil {
					return err
				} else if n == 0 {
					raced = append(raced, u.row.ID)
				}
			}
			return nil
		})
		if err != nil {
			return d.wrap(err, "rotate credentials")
		}
		p.Rewritten += len(updates) - len(raced)
		p.Raced += len(raced)
		if len(raced) == 0 {
			return nil
		}
		rows = nil
		if err := d.bun.NewSelect().Table(TableNodes).Column("id", "uuid", "driver_info").
			Where("id IN (?)", bun.In(raced)).OrderExpr("id").Scan(ctx, &rows); err != nil {
			return d.wrap(err, "re-read nodes to rotate")
		}
	}
	return nil
}

// resealed returns r's driver_info text with every secret value sealed with
// the current key, and whether that differs from what is stored.
func resealed(keys *keyring.Keyring, r credentialRow) (string, bool, error) {
	if r.DriverInfo == nil {
		return "", false, nil
	}
	var m JSONObject
	if err := m.Scan(*r.DriverInfo); err != nil {
		return "", false, fmt.Errorf("db: node %s: %w", r.UUID, err)
	}
	if !hasStaleCredentials(keys, m) {
		return "", false, nil
	}
	plain, err := openCredentials(keys, m)
	if err != nil {
		return "", false, fmt.Errorf("db: node %s: %w", r.UUID, err)
	}
	sealed, err := sealCredentials(keys, plain)
	if err != nil {
		return "", false, fmt.Errorf("db: node %s: %w", r.UUID, err)
	}
	b, err := json.Marshal(sealed)
	if err != nil {
		return "", false, fmt.Errorf("db: node %s: encode driver_info: %w", r.UUID, err)
	}
	return string(b), true, nil
}
