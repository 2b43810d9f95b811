package db

import (
	"context"
	"fmt"
	"reflect"

	"github.com/jackc/pgx/v5"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/uptrace/bun"
)

// ListNodes returns the nodes the query q selects, in its order, built as
// LoadAll builds them: the REST API's node lists. bun writes the query's
// text, as for LoadAll; the rows are scanned as GetNode scans its row
// (fieldDest, and rawScan on PostgreSQL) instead of by bun's reflective
// scanner, which took about a third of a GET /v1/nodes/detail?limit=100's
// API CPU. TestListNodesMatchesLoadAll holds the two equal.
func (s *Store) ListNodes(ctx context.Context, q func(*bun.SelectQuery) *bun.SelectQuery) ([]*objects.Node, error) {
	b, err := q(s.db.bun.NewSelect().Model((*Node)(nil))).AppendQuery(s.db.bun.QueryGen(), nil)
	if err != nil {
		return nil, s.db.wrap(err, "list Node")
	}
	text := string(b)
	var rows []*Node
	if s.db.dialect == Postgres {
		err = s.withPgx(ctx, func(pc *pgx.Conn) error {
			rows, err = scanNodesPgx(ctx, pc, s.db.bun, text)
			return err
		})
	} else {
		rows, err = s.scanNodesSQL(ctx, text)
	}
	if err != nil {
		return nil, s.db.wrap(err, "list Node")
	}
	out := make([]*objects.Node, 0, len(rows))
	for _, row := range rows {
		obj, err := s.fromRow("Node", row)
		if err != nil {
			return nil, err
		}
		out = append(out, obj.(*objects.Node))
	}
	return out, nil
}

// nodeColumnIndexes maps the columns of a result over the nodes table to
// the Node fields they are read into.
func nodeColumnIndexes(db *bun.DB, columns []string) ([][]int, error) {
	table := db.Table(reflect.TypeFor[Node]())
	out := make([][]int, len(columns))
	for i, c := range columns {
		f, ok := table.FieldMap[c]
		if !ok {
			return nil, fmt.Errorf("db: nodes has no column %q", c)
		}
		out[i] = f.Index
	}
	return out, nil
}

// nodeDests points dests at the fields of row that the columns (by their
// indexes) are read into.
func nodeDests(row *Node, indexes [][]int, dests []any) {
	base := reflect.ValueOf(row).Elem()
	for i, index := range indexes {
		dests[i] = fieldDest(base.FieldByIndex(index))
	}
}

// scanNodesSQL runs text through database/sql (SQLite, MySQL).
func (s *Store) scanNodesSQL(ctx context.Context, text string) ([]*Node, error) {
	rows, err := s.db.bun.DB.QueryContext(ctx, text)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	indexes, err := nodeColumnIndexes(s.db.bun, cols)
	if err != nil {
		return nil, err
	}
	var out []*Node
	dests := make([]any, len(cols))
	for rows.Next() {
		row := new(Node)
		nodeDests(row, indexes, dests)
		if err := rows.Scan(dests...); err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// scanNodesPgx runs text on a PostgreSQL connection through pgx directly,
// each row decoded by rawScan when it can (see queryRow).
func scanNodesPgx(ctx context.Context, pc *pgx.Conn, db *bun.DB, text string) ([]*Node, error) {
	rows, err := pc.Query(ctx, text)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	fds := rows.FieldDescriptions()
	cols := make([]string, len(fds))
	for i, fd := range fds {
		cols[i] = fd.Name
	}
	indexes, err := nodeColumnIndexes(db, cols)
	if err != nil {
		return nil, err
	}
	var out []*Node
	dests := make([]any, len(cols))
	for rows.Next() {
		row := new(Node)
		nodeDests(row, indexes, dests)
		if !rawScan(fds, rows.RawValues(), dests) {
			if err := rows.Scan(dests...); err != nil {
				return nil, err
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}
