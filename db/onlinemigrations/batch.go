package onlinemigrations

import (
	"context"
	"fmt"
	"sync"

	"github.com/rivetmetal/rivet/db"
	"github.com/uptrace/bun"
)

// Expr is an SQL fragment with bun placeholders (?) and their arguments.
type Expr struct {
	SQL  string
	Args []any
}

// ChunkSize is how many rows one UPDATE of UpdateInBatches changes at most.
// Each UPDATE is its own statement and transaction, so a row a migration
// changes is locked for one chunk only (milliseconds), whatever the budget.
const ChunkSize = 1000

// UpdateInBatches is the shape of most online migrations — backfill a new
// column, move a value — over a table with an id column: it counts the
// rows matching where, then applies set to at most maxCount of them
// (0 = all), lowest id first, and returns (total at start, migrated). See
// UpdateChunks for how the rows are changed.
func UpdateInBatches(ctx context.Context, d *db.DB, table string, where, set Expr, maxCount int) (total, migrated int, err error) {
	count, err := d.Bun().NewSelect().Table(table).Where(where.SQL, where.Args...).Count(ctx)
	if err != nil || count == 0 {
		return 0, 0, wrap(err, "update "+table+" in batches")
	}
	migrated, err = UpdateChunks(ctx, d, table, where, set, maxCount, 0)
	return int(count), migrated, err
}

// UpdateChunks applies set to at most maxCount rows of table matching where
// (0 = all), lowest id first, and returns how many it changed. It walks the
// table by id: each step reads the ids of the next chunk (0: ChunkSize)
// matching rows after the last one seen (one query, served by the primary
// key) and updates those rows in one statement that repeats where, so a
// row a running service changed meanwhile is skipped rather than
// overwritten. A row that starts matching behind the walk is left to the
// next call. The ids are read first because MySQL cannot LIMIT a subquery
// of the updated table.
func UpdateChunks(ctx context.Context, d *db.DB, table string, where, set Expr, maxCount, chunk int) (migrated int, err error) {
	return new(Walker).Update(ctx, d, table, where, set, maxCount, chunk)
}

// Walker is UpdateChunks that remembers where its last call stopped: the
// next call goes on from there instead of reading again, from the lowest
// id, the rows the previous calls migrated (a cost that grows with every
// pass of a long run). A call that reaches the end of the table with
// budget left goes round to the rows before its starting point, so a call
// that migrates less than its budget has still visited every row: the
// position is only where to begin, and any table, where and set are
// handled correctly from it. It is safe for concurrent use.
type Walker struct {
	mu    sync.Mutex
	after *int64 // the walk goes on after this id; nil: from the start
}

// Update is UpdateChunks, starting where the previous call stopped.
func (w *Walker) Update(ctx context.Context, d *db.DB, table string, where, set Expr, maxCount, chunk int) (migrated int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if chunk <= 0 {
		chunk = ChunkSize
	}
	budget := func() int {
		if maxCount <= 0 {
			return 0
		}
		return maxCount - migrated
	}
	start := w.after
	n, last, done, err := walk(ctx, d, table, where, set, start, nil, maxCount, chunk)
	migrated, w.after = n, last
	if err != nil || !done {
		return migrated, err
	}
	w.after = nil
	if start == nil || (maxCount > 0 && budget() <= 0) {
		return migrated, nil
	}
	n, last, done, err = walk(ctx, d, table, where, set, nil, start, budget(), chunk)
	migrated += n
	if !done {
		w.after = last
	}
	return migrated, err
}

// walk updates chunks of the rows matching where with after < id <= until
// (nil: unbounded) until maxCount (0: no limit) are migrated or none is
// left. It returns the rows changed, the last id it read and whether it
// reached the end of the range.
func walk(ctx context.Context, d *db.DB, table string, where, set Expr, after, until *int64, maxCount, chunk int) (migrated int, last *int64, done bool, err error) {
	action := "update " + table + " in batches"
	last = after
	for maxCount <= 0 || migrated < maxCount {
		n := chunk
		if maxCount > 0 {
			n = min(n, maxCount-migrated)
		}
		q := d.Bun().NewSelect().Table(table).Column("id").Where(where.SQL, where.Args...).OrderExpr("id ASC").Limit(int64(n))
		if last != nil {
			q = q.Where("id > ?", *last)
		}
		if until != nil {
			q = q.Where("id <= ?", *until)
		}
		var ids []int64
		if err := q.Scan(ctx, &ids); err != nil {
			return migrated, last, false, wrap(err, action)
		}
		if len(ids) == 0 {
			return migrated, last, true, nil
		}
		res, err := d.Bun().NewUpdate().Table(table).Set(set.SQL, set.Args...).
			Where("id IN (?)", bun.List(ids)).Where(where.SQL, where.Args...).Exec(ctx)
		if err != nil {
			return migrated, last, false, wrap(err, action)
		}
		changed, err := res.RowsAffected()
		if err != nil {
			return migrated, last, false, wrap(err, action)
		}
		migrated += int(changed)
		last = &ids[len(ids)-1]
		if len(ids) < n {
			return migrated, last, true, nil
		}
	}
	return migrated, last, false, nil
}

func wrap(err error, action string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", action, err)
}
