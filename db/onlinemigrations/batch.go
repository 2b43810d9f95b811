package onlinemigrations

import (
	"context"
	"fmt"

	"github.com/rivetmetal/rivet/db"
	"github.com/uptrace/bun"
)

// Expr is an SQL fragment with bun placeholders (?) and their arguments.
type Expr struct {
	SQL  string
	Args []any
}

// UpdateInBatches is the shape of most online migrations — backfill a new
// column, move a value — over a table with an id column: it counts the
// rows matching where, then applies set to at most maxCount of them
// (0 = all), lowest id first, and returns (total at start, migrated). The
// UPDATE repeats where, so rows a running service changed meanwhile are
// skipped rather than overwritten. MySQL cannot LIMIT a subquery of the
// updated table, hence the ids are read first.
func UpdateInBatches(ctx context.Context, d *db.DB, table string, where, set Expr, maxCount int) (total, migrated int, err error) {
	action := "update " + table + " in batches"
	count, err := d.Bun().NewSelect().Table(table).Where(where.SQL, where.Args...).Count(ctx)
	if err != nil || count == 0 {
		return 0, 0, wrap(err, action)
	}
	total = int(count)
	q := d.Bun().NewSelect().Table(table).Column("id").Where(where.SQL, where.Args...).OrderExpr("id ASC")
	if maxCount > 0 {
		q = q.Limit(int64(maxCount))
	}
	var ids []int64
	if err := q.Scan(ctx, &ids); err != nil {
		return 0, 0, wrap(err, action)
	}
	if len(ids) == 0 {
		return total, 0, nil
	}
	res, err := d.Bun().NewUpdate().Table(table).Set(set.SQL, set.Args...).
		Where("id IN (?)", bun.List(ids)).Where(where.SQL, where.Args...).Exec(ctx)
	if err != nil {
		return 0, 0, wrap(err, action)
	}
	n, err := res.RowsAffected()
	return total, int(n), wrap(err, action)
}

func wrap(err error, action string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", action, err)
}
