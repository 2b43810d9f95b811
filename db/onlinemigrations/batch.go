package onlinemigrations

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/rivetmetal/rivet/db"
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
// table by id in chunks of chunk (0: ChunkSize) matching rows: one query
// finds the id range holding the next chunk (served by the primary key),
// one UPDATE changes the rows of that range that match where — repeated in
// the UPDATE, so a row a running service changed meanwhile is skipped
// rather than overwritten. A row that starts matching behind the walk is
// left to the next call. See Walker for running chunks side by side.
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
	// Workers is how many chunk UPDATEs may run at once (0 or 1: one
	// after another). The chunks are found one after another and are
	// disjoint id ranges, so concurrent UPDATEs never touch the same row;
	// on a database server with cores to spare they overlap the time each
	// spends writing new row versions and index entries. SQLite has one
	// writer at a time: use 1.
	Workers int

	mu    sync.Mutex
	after *int64 // the walk goes on after this id; nil: from the start
}

// Update is UpdateChunks, starting where the previous call stopped.
func (w *Walker) Update(ctx context.Context, d *db.DB, table string, where, set Expr, maxCount, chunk int) (migrated int, err error) {
	return w.update(ctx, d, table, where, set, maxCount, chunk, w.Workers)
}

func (w *Walker) update(ctx context.Context, d *db.DB, table string, where, set Expr, maxCount, chunk, workers int) (migrated int, err error) {
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
	wk := walker{d: d, table: table, where: where, set: set, chunk: chunk, workers: max(workers, 1)}
	start := w.after
	n, last, done, err := wk.walk(ctx, start, nil, maxCount)
	migrated, w.after = n, last
	if err != nil || !done {
		return migrated, err
	}
	w.after = nil
	if start == nil || (maxCount > 0 && budget() <= 0) {
		return migrated, nil
	}
	n, last, done, err = wk.walk(ctx, nil, start, budget())
	migrated += n
	if !done {
		w.after = last
	}
	return migrated, err
}

// walker is one call's walk over table.
type walker struct {
	d          *db.DB
	table      string
	where, set Expr
	chunk      int
	workers    int
}

// chunkDone is what one chunk's UPDATE did.
type chunkDone struct {
	after   *int64 // the chunk is the rows after this id (nil: from the start)…
	planned int    // …of which this many matched when it was found
	changed int
	err     error
}

// walk updates chunks of the rows matching where with after < id <= until
// (nil: unbounded) until maxCount (0: no limit) are migrated or none is
// left. It returns the rows changed, the id the walk should go on after
// and whether it reached the end of the range.
//
// Up to w.workers chunks are in flight. A chunk is planned only within
// what is left of the budget once the chunks in flight are counted at
// what they matched when found, and a chunk that changed fewer rows (a
// service saved them meanwhile) returns the difference to the budget, so
// the walk never migrates more than maxCount and stops under it only at
// the end of the range.
func (w walker) walk(ctx context.Context, after, until *int64, maxCount int) (migrated int, last *int64, done bool, err error) {
	action := "update " + w.table + " in batches"
	last = after
	results := make(chan chunkDone, w.workers)
	inflight, planned := 0, 0
	var failed *chunkDone
	for {
		for failed == nil && !done && inflight < w.workers && (maxCount <= 0 || migrated+planned < maxCount) {
			n := w.chunk
			if maxCount > 0 {
				n = min(n, maxCount-migrated-planned)
			}
			hi, k, err := w.next(ctx, last, until, n)
			if err != nil {
				failed = &chunkDone{after: last, err: err}
				break
			}
			if k == 0 {
				done = true
				break
			}
			from := last
			go func() { results <- w.update(ctx, from, hi, k) }()
			inflight, planned = inflight+1, planned+k
			last = &hi
			done = k < n
		}
		if inflight == 0 {
			break
		}
		r := <-results
		inflight, planned = inflight-1, planned-r.planned
		switch {
		case r.err != nil && (failed == nil || failed.after != nil && (r.after == nil || *r.after < *failed.after)):
			failed = &r
		case r.err == nil:
			// A row that began to match inside the chunk's range between
			// the two statements is changed too, but the budget counts
			// at most what the chunk was planned for.
			migrated += min(r.changed, r.planned)
		}
	}
	if failed != nil {
		// Go on, next time, from the earliest chunk that failed.
		return migrated, failed.after, false, wrap(failed.err, action)
	}
	return migrated, last, done, nil
}

// next finds the next chunk after the id after (nil: from the start) and
// up to until (nil: unbounded): the highest id among the first n matching
// rows, and how many matched (0: none is left).
func (w walker) next(ctx context.Context, after, until *int64, n int) (hi int64, k int, err error) {
	q := w.d.Bun().NewSelect().Table(w.table).Column("id").Where(w.where.SQL, w.where.Args...).OrderExpr("id ASC").Limit(int64(n))
	if after != nil {
		q = q.Where("id > ?", *after)
	}
	if until != nil {
		q = q.Where("id <= ?", *until)
	}
	var top sql.NullInt64
	err = w.d.Bun().NewSelect().TableExpr("(?) AS chunk", q).ColumnExpr("MAX(id), COUNT(*)").Scan(ctx, &top, &k)
	return top.Int64, k, err
}

// update changes the matching rows with after < id <= hi: one statement
// over an id range, which the database reads from the primary key without
// a list of ids to parse and look up one by one.
func (w walker) update(ctx context.Context, after *int64, hi int64, planned int) chunkDone {
	out := chunkDone{after: after, planned: planned}
	q := w.d.Bun().NewUpdate().Table(w.table).Set(w.set.SQL, w.set.Args...).Where("id <= ?", hi).Where(w.where.SQL, w.where.Args...)
	if after != nil {
		q = q.Where("id > ?", *after)
	}
	res, err := q.Exec(ctx)
	if err == nil {
		var n int64
		n, err = res.RowsAffected()
		out.changed = int(n)
	}
	out.err = err
	return out
}

func wrap(err error, action string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", action, err)
}
