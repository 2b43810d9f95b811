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
// LoadAll builds them, for the REST API's node lists. bun writes the
// query's text, as for LoadAll; the rows are scanned as GetNode scans its
// row (fieldDest, and rawScan on PostgreSQL) instead of by bun's
// reflective scanner, which took about a third of a GET
// /v1/nodes/detail?limit=100's API CPU. TestListNodesMatchesLoadAll holds
// the two equal.
//
// The nodes are read-only (objects.Registry.FromDBReadOnly): a list never
// saves them, so they skip the change-tracking snapshot, and a Save of one
// is objects.ErrReadOnly. keep, when not nil, is asked about each JSON
// document of a row at the latest Node version (driver_info aside, which
// is stored sealed): the documents it accepts stay as stored, in
// ListedNode.Raw, undecoded, and their Node fields hold their defaults.
// Decoding a page's documents was about 30 % of its allocations, for a
// view that mostly writes them back unchanged.
func (s *Store) ListNodes(ctx context.Context, q func(*bun.SelectQuery) *bun.SelectQuery,
	keep func(field, doc string) bool) ([]ListedNode, error) {
	b, err := q(s.db.bun.NewSelect().Model((*Node)(nil))).AppendQuery(s.db.bun.QueryGen(), nil)
	if err != nil {
		return nil, s.db.wrap(err, "list Node")
	}
	text := string(b)
	sc := nodeListScan{keep: keep}
	if keep != nil {
		latest, err := s.reg.Latest("Node")
		if err != nil {
			return nil, err
		}
		sc.latest = latest.String()
	}
	if s.db.dialect == Postgres {
		err = s.withPgx(ctx, func(pc *pgx.Conn) error {
			return sc.scanPgx(ctx, pc, s.db.bun, text)
		})
	} else {
		err = s.scanNodesSQL(ctx, text, &sc)
	}
	if err != nil {
		return nil, s.db.wrap(err, "list Node")
	}
	out := make([]ListedNode, len(sc.rows))
	for i, row := range sc.rows {
		obj, err := s.fromRowAs("Node", &row.Node, true)
		if err != nil {
			return nil, err
		}
		out[i] = ListedNode{Node: obj.(*objects.Node), Raw: row.kept}
	}
	return out, nil
}

// ListedNode is a node ListNodes read for a view.
type ListedNode struct {
	// Node is read-only: a Save of it is objects.ErrReadOnly. The fields of
	// the documents in Raw hold their defaults, not the documents.
	Node *objects.Node
	// Raw are the JSON documents kept as stored (ListNodes's keep).
	Raw []RawDocument
}

// RawDocument is a node's JSON document as stored.
type RawDocument struct {
	Field, JSON string
}

// Document returns the stored JSON of n's document field when ListNodes
// kept it raw.
func (n ListedNode) Document(field string) (string, bool) {
	for _, d := range n.Raw {
		if d.Field == field {
			return d.JSON, true
		}
	}
	return "", false
}

// nodeListScan reads the rows of a node list; with keep, it reads each
// JSON document column (driver_info aside) as text first, and decodes
// only those keep does not accept.
type nodeListScan struct {
	keep    func(field, doc string) bool
	latest  string // the latest Node version, with keep
	indexes [][]int
	docCols []int // with keep: the columns read as raw text
	rows    []*listedRow
}

// listedRow is a row and, with keep, its JSON document columns as read.
type listedRow struct {
	Node
	docs   []docText // by docCols
	pgDocs []*string // on PostgreSQL, what rawScan reads them into
	kept   []RawDocument
}

// docText reads a JSON document column as text (valid false for NULL),
// without nullString's pointer per value.
type docText struct {
	s     string
	valid bool
}

// Scan implements sql.Scanner.
func (d *docText) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*d = docText{}
	case string:
		*d = docText{s: v, valid: true}
	case []byte:
		*d = docText{s: string(v), valid: true}
	default:
		return fmt.Errorf("db: cannot read %T as text", src)
	}
	return nil
}

// columns prepares the scan of a result with these columns.
func (sc *nodeListScan) columns(db *bun.DB, cols []string) error {
	indexes, err := nodeColumnIndexes(db, cols)
	if err != nil {
		return err
	}
	sc.indexes = indexes
	if sc.keep == nil {
		return nil
	}
	table := db.Table(reflect.TypeFor[Node]())
	for i, c := range cols {
		if f := table.FieldMap[c]; c != credentialColumn && f.StructField.Type == reflect.TypeFor[JSONObject]() {
			sc.docCols = append(sc.docCols, i)
		}
	}
	return nil
}

// next returns a new row and points dests at its destinations (on
// PostgreSQL, pg, ones rawScan knows).
func (sc *nodeListScan) next(dests []any, pg bool) *listedRow {
	row := new(listedRow)
	nodeDests(&row.Node, sc.indexes, dests)
	if len(sc.docCols) > 0 {
		row.docs = make([]docText, len(sc.docCols))
		if pg {
			row.pgDocs = make([]*string, len(sc.docCols))
		}
		for k, col := range sc.docCols {
			if pg {
				dests[col] = nullString{&row.pgDocs[k]}
			} else {
				dests[col] = &row.docs[k]
			}
		}
	}
	return row
}

// finish decodes the documents of row that keep does not accept (all of
// them when row is not at the latest version) and appends it.
func (sc *nodeListScan) finish(row *listedRow, cols []string) error {
	if len(sc.docCols) > 0 {
		latest := row.Version != nil && *row.Version == sc.latest
		base := reflect.ValueOf(&row.Node).Elem()
		for k, p := range row.pgDocs {
			if p != nil {
				row.docs[k] = docText{s: *p, valid: true}
			}
		}
		row.kept = make([]RawDocument, 0, len(sc.docCols))
		for k, col := range sc.docCols {
			doc := row.docs[k]
			if !doc.valid {
				continue // NULL: the field's default, as JSONObject reads it
			}
			if latest && sc.keep(cols[col], doc.s) {
				row.kept = append(row.kept, RawDocument{Field: cols[col], JSON: doc.s})
				continue
			}
			if err := base.FieldByIndex(sc.indexes[col]).Addr().Interface().(*JSONObject).Scan(doc.s); err != nil {
				return fmt.Errorf("nodes.%s: %w", cols[col], err)
			}
		}
		row.docs, row.pgDocs = nil, nil
	}
	sc.rows = append(sc.rows, row)
	return nil
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
func (s *Store) scanNodesSQL(ctx context.Context, text string, sc *nodeListScan) error {
	rows, err := s.db.bun.DB.QueryContext(ctx, text)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	if err := sc.columns(s.db.bun, cols); err != nil {
		return err
	}
	dests := make([]any, len(cols))
	for rows.Next() {
		row := sc.next(dests, false)
		if err := rows.Scan(dests...); err != nil {
			return err
		}
		if err := sc.finish(row, cols); err != nil {
			return err
		}
	}
	return rows.Err()
}

// scanPgx runs text on a PostgreSQL connection through pgx directly,
// each row decoded by rawScan when it can (see queryRow).
func (sc *nodeListScan) scanPgx(ctx context.Context, pc *pgx.Conn, db *bun.DB, text string) error {
	rows, err := pc.Query(ctx, text)
	if err != nil {
		return err
	}
	defer rows.Close()
	fds := rows.FieldDescriptions()
	cols := make([]string, len(fds))
	for i, fd := range fds {
		cols[i] = fd.Name
	}
	if err := sc.columns(db, cols); err != nil {
		return err
	}
	dests := make([]any, len(cols))
	for rows.Next() {
		row := sc.next(dests, true)
		if !rawScan(fds, rows.RawValues(), dests) {
			if err := rows.Scan(dests...); err != nil {
				return err
			}
		}
		if err := sc.finish(row, cols); err != nil {
			return err
		}
	}
	return rows.Err()
}
