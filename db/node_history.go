package db

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// NodeHistory is a row of the node_history table (NodeHistory objects,
// API 1.78). node_id has no foreign key (see the migration): rows of a
// node a release 0.2 conductor deleted stay until PruneNodeHistory.
type NodeHistory struct {
	bun.BaseModel `bun:"table:node_history,alias:nh"`

	ID        int64   `bun:"id,pk,autoincrement"`
	UUID      string  `bun:"uuid,notnull"`
	NodeID    int64   `bun:"node_id,notnull"`
	Conductor *string `bun:"conductor"`
	EventType *string `bun:"event_type"`
	Severity  *string `bun:"severity"`
	Event     *string `bun:"event"`
	UserName  *string `bun:"user_name"`
	Timestamps
	// Version is the NodeHistory object version the row was written at.
	Version *string `bun:"version"`
}

// PruneNodeHistory keeps at most maxEntries history entries per node (the
// newest) and drops the entries of nodes that no longer exist, deleting at
// most batch rows (0: no bound) per call; it returns how many it deleted.
// maxEntries 0 keeps none. Each DELETE is its own short statement.
func (d *DB) PruneNodeHistory(ctx context.Context, maxEntries, batch int) (int, error) {
	deleted := 0
	left := func() int {
		if batch <= 0 {
			return 1 << 30
		}
		return batch - deleted
	}
	// Entries of deleted nodes first: they are never shown again.
	var orphans []int64
	if err := d.bun.NewSelect().Table(TableNodeHistory).Column("id").
		Where("NOT EXISTS (SELECT 1 FROM nodes WHERE nodes.id = node_history.node_id)").
		OrderExpr("id").Limit(int64(min(left(), 10000))).Scan(ctx, &orphans); err != nil {
		return 0, d.wrap(err, "list orphaned node history")
	}
	if len(orphans) > 0 {
		n, err := d.deleteHistoryIDs(ctx, orphans)
		deleted += n
		if err != nil {
			return deleted, err
		}
	}
	// Then, per node over the bound, its oldest entries.
	var over []struct {
		NodeID int64 `bun:"node_id"`
		Count  int   `bun:"n"`
	}
	if err := d.bun.NewSelect().Table(TableNodeHistory).Column("node_id").ColumnExpr("COUNT(*) AS n").
		Group("node_id").Having("COUNT(*) > ?", maxEntries).OrderExpr("node_id").
		Scan(ctx, &over); err != nil {
		return deleted, d.wrap(err, "count node history")
	}
	for _, o := range over {
		if left() <= 0 {
			break
		}
		var ids []int64
		if err := d.bun.NewSelect().Table(TableNodeHistory).Column("id").Where("node_id = ?", o.NodeID).
			OrderExpr("id").Limit(int64(min(o.Count-maxEntries, left()))).Scan(ctx, &ids); err != nil {
			return deleted, d.wrap(err, fmt.Sprintf("list history of node %d", o.NodeID))
		}
		n, err := d.deleteHistoryIDs(ctx, ids)
		deleted += n
		if err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

// deleteHistoryIDs deletes history rows by id, 1,000 per statement.
func (d *DB) deleteHistoryIDs(ctx context.Context, ids []int64) (int, error) {
	deleted := 0
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 1000)]
		ids = ids[len(chunk):]
		res, err := d.bun.NewDelete().Table(TableNodeHistory).Where("id IN (?)", bun.In(chunk)).Exec(ctx)
		if err != nil {
			return deleted, d.wrap(err, "prune node history")
		}
		n, _ := res.RowsAffected()
		deleted += int(n)
	}
	return deleted, nil
}
