package db

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
)

// Reading one node without bun's query builder and reflective scanner.
//
// GET /v1/nodes/{ident} is the API's most frequent request. Through bun it
// built the SELECT's text anew every time (with the identifier written into
// it, so each node was a new statement to PostgreSQL) and scanned the row
// by reflection, a quarter of the request's API CPU. Here the statement is
// written once per dialect and column, with the identifier as a bind
// parameter, so PostgreSQL prepares it once per connection; the row is
// scanned into typed destinations; the node is then built by fromRow as
// before. TestGetNodeTypedMatchesBun holds both paths equal on every
// dialect.

// fieldDest returns where the field v (addressable) of a row is scanned
// to: a nullable text, integer or boolean column through a typed sql.Scanner (no
// database/sql reflective pointer-to-pointer assignment), a non-null
// timestamp as bun reads it (notNullTime), anything else into the field
// itself, as database/sql and pgx scan any type bun's models use. It goes
// by the field's Go type, so a field added to Node needs nothing here.
func fieldDest(v reflect.Value) any {
	switch p := v.Addr().Interface().(type) {
	case **string:
		return nullString{p}
	case **int64:
		return nullInt64{p}
	case **bool:
		return nullBool{p}
	case *time.Time:
		return notNullTime{p}
	default:
		return p
	}
}

// nullString scans a nullable text column into a *string (nil for NULL)
// without database/sql's reflective pointer-to-pointer assignment.
type nullString struct{ p **string }

func (d nullString) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*d.p = nil
	case string:
		*d.p = &v
	case []byte:
		s := string(v)
		*d.p = &s
	default:
		return fmt.Errorf("db: cannot read %T as text", src)
	}
	return nil
}

// nullBool scans a nullable boolean column into a *bool (SQLite and
// MySQL hold booleans as integers).
type nullBool struct{ p **bool }

func (d nullBool) Scan(src any) error {
	if src == nil {
		*d.p = nil
		return nil
	}
	var b sql.NullBool
	if err := b.Scan(src); err != nil {
		return err
	}
	*d.p = &b.Bool
	return nil
}

// nullInt64 scans a nullable integer column into a *int64.
type nullInt64 struct{ p **int64 }

func (d nullInt64) Scan(src any) error {
	if src == nil {
		*d.p = nil
		return nil
	}
	var n sql.NullInt64
	if err := n.Scan(src); err != nil {
		return err
	}
	*d.p = &n.Int64
	return nil
}

// notNullTime scans a timestamp column as bun does (time values, or the
// text SQLite and MySQL may return) into a time.Time.
type notNullTime struct{ p *time.Time }

func (d notNullTime) Scan(src any) error {
	var t bun.NullTime
	if err := t.Scan(src); err != nil {
		return err
	}
	*d.p = t.Time
	return nil
}

// nodeQuery is the statement reading the node whose column equals one
// bind parameter, and the index in Node of each column it reads, in order.
type nodeQuery struct {
	text   string
	fields [][]int
}

// nodeQueryKey names a nodeQuery: the dialect, the column the node is
// selected by, and whether its traits are read as one more column.
type nodeQueryKey struct {
	dialect Dialect
	col     string
	traits  bool
}

// nodeQueries caches nodeQuery per nodeQueryKey.
var nodeQueries sync.Map // nodeQueryKey → *nodeQuery

// nodeQueryFor returns the statement selecting a node by col, with its
// traits as a last column when traits is set (node_get_traits.go).
func (s *Store) nodeQueryFor(col string, traits bool) *nodeQuery {
	key := nodeQueryKey{s.db.dialect, col, traits}
	if q, ok := nodeQueries.Load(key); ok {
		return q.(*nodeQuery)
	}
	q := s.buildNodeQuery(col, traits)
	nodeQueries.Store(key, q)
	return q
}

func (s *Store) buildNodeQuery(col string, traits bool) *nodeQuery {
	table := s.db.bun.Table(reflect.TypeFor[Node]())
	quote := func(id string) string {
		q := string(s.db.bun.Dialect().IdentQuote())
		return q + id + q
	}
	q := &nodeQuery{}
	names := make([]string, 0, len(table.Fields))
	for _, f := range table.Fields {
		q.fields = append(q.fields, f.Index)
		names = append(names, quote(f.Name))
	}
	param := "?"
	if s.db.dialect == Postgres {
		param = "$1"
	}
	if traits {
		names = append(names, nodeTraitsColumn(s.db.dialect, quote(table.Name)+"."+quote("id")))
	}
	q.text = "SELECT " + strings.Join(names, ", ") + " FROM " + quote(table.Name) + " WHERE " + quote(col) + " = " + param + " LIMIT 1"
	return q
}

// loadNodeBy reads the node whose col equals value, built as Load builds
// it.
func (s *Store) loadNodeBy(ctx context.Context, col string, value any) (*Node, error) {
	return s.loadNode(ctx, col, value, nil)
}

// loadNode reads the node whose col equals value and, when traits is not
// nil, its traits (nodeTraitsColumn's text) into *traits, in one
// statement.
func (s *Store) loadNode(ctx context.Context, col string, value any, traits *string) (*Node, error) {
	q := s.nodeQueryFor(col, traits != nil)
	row := new(Node)
	base := reflect.ValueOf(row).Elem()
	n := len(q.fields)
	if traits != nil {
		n++
	}
	dests := make([]any, len(q.fields), n)
	for i, index := range q.fields {
		dests[i] = fieldDest(base.FieldByIndex(index))
	}
	if traits != nil {
		dests = append(dests, traits)
	}
	if err := s.queryRow(ctx, q.text, value, dests); err != nil {
		return nil, s.db.wrap(notFound(err), "load Node")
	}
	return row, nil
}

// queryRow runs a one-row query with one bind parameter and scans its
// columns into dests. On SQLite the statement is prepared once
// (prepared.go). On PostgreSQL it goes to pgx directly on a pooled
// connection: database/sql's pgx adapter builds a converter per column for
// every result (83 allocations for a node) and then boxes each value, a
// cost that is its own once the statement itself is prepared.
func (s *Store) queryRow(ctx context.Context, text string, arg any, dests []any) error {
	switch s.db.dialect {
	case SQLite:
		st, err := s.db.prepared(ctx, text)
		if err != nil {
			return err
		}
		// A read of one row by key on the embedded database takes
		// microseconds: watching the caller's cancellation costs more than
		// it saves. With a context that is never done, database/sql starts
		// no goroutine to close the rows and modernc's driver none to
		// interrupt the statement (about 5 % of GET /v1/nodes/{uuid}'s CPU,
		// docs/performance.md); the context's values are kept.
		return st.QueryRowContext(context.WithoutCancel(ctx), arg).Scan(dests...)
	case MySQL:
		return s.db.bun.DB.QueryRowContext(ctx, text, arg).Scan(dests...)
	}
	return s.withPgx(ctx, func(pc *pgx.Conn) error {
		rows, err := pc.Query(ctx, text, arg)
		if err != nil {
			return err
		}
		defer rows.Close()
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return pgx.ErrNoRows
		}
		if !rawScan(rows.FieldDescriptions(), rows.RawValues(), dests) {
			if err := rows.Scan(dests...); err != nil {
				return err
			}
		}
		rows.Close()
		return rows.Err()
	})
}

// withPgx runs f with the pgx connection under one of the pool's
// PostgreSQL connections, held for f's duration.
func (s *Store) withPgx(ctx context.Context, f func(*pgx.Conn) error) error {
	conn, err := s.db.bun.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		switch c := dc.(type) {
		case *secondSightConn:
			return f(c.Conn.Conn())
		case *stdlib.Conn:
			return f(c.Conn())
		}
		return fmt.Errorf("db: PostgreSQL connection is %T, not pgx's", dc)
	})
}

// PostgreSQL type OIDs rawScan decodes.
const (
	oidBool        = 16
	oidInt8        = 20
	oidText        = 25
	oidVarchar     = 1043
	oidTimestamptz = 1184
)

// rawScan decodes a row's raw values into the destinations fieldDest
// gives, for the types and wire formats the nodes table has on PostgreSQL
// (text, bigint, boolean, timestamptz in binary); false when a column has
// another type, format or an unexpected NULL (found before anything is
// written) or holds a JSON document that does not decode (found while
// decoding), and pgx's Scan, which writes every destination again, must
// do it or report the error. pgx plans a scan per column of every result
// and hands text to a sql.Scanner as a new string: 60 of a GET's
// allocations.
func rawScan(fds []pgconn.FieldDescription, vals [][]byte, dests []any) bool {
	if len(fds) != len(dests) || len(vals) != len(dests) {
		return false
	}
	for i, d := range dests {
		if !rawScannable(d, fds[i], vals[i]) {
			return false
		}
	}
	for i, d := range dests {
		v := vals[i]
		switch d := d.(type) {
		case *int64:
			*d = int64(binary.BigEndian.Uint64(v))
		case nullInt64:
			if v == nil {
				*d.p = nil
			} else {
				n := int64(binary.BigEndian.Uint64(v))
				*d.p = &n
			}
		case *string:
			*d = string(v)
		case nullString:
			if v == nil {
				*d.p = nil
			} else {
				str := string(v)
				*d.p = &str
			}
		case *bool:
			*d = v[0] != 0
		case nullBool:
			if v == nil {
				*d.p = nil
			} else {
				b := v[0] != 0
				*d.p = &b
			}
		case *JSONObject:
			var src any
			if v != nil {
				src = v
			}
			if err := d.Scan(src); err != nil {
				return false // pgx's Scan reports it
			}
		case *bun.NullTime:
			if v == nil {
				d.Time = time.Time{}
			} else {
				d.Time = pgTimestamptz(v)
			}
		case notNullTime:
			*d.p = pgTimestamptz(v)
		}
	}
	return true
}

// rawScannable reports whether rawScan can decode v, of the column fd, into d.
func rawScannable(d any, fd pgconn.FieldDescription, v []byte) bool {
	binaryOf := func(oid uint32, size int) bool {
		return fd.DataTypeOID == oid && fd.Format == pgx.BinaryFormatCode && len(v) == size
	}
	text := fd.DataTypeOID == oidText || fd.DataTypeOID == oidVarchar
	switch d.(type) {
	case *int64:
		return binaryOf(oidInt8, 8)
	case nullInt64:
		return v == nil && fd.DataTypeOID == oidInt8 || binaryOf(oidInt8, 8)
	case *string:
		return text && v != nil
	case nullString, *JSONObject:
		return text
	case *bool:
		return binaryOf(oidBool, 1)
	case nullBool:
		return v == nil && fd.DataTypeOID == oidBool || binaryOf(oidBool, 1)
	case *bun.NullTime:
		return v == nil && fd.DataTypeOID == oidTimestamptz || binaryOf(oidTimestamptz, 8) && finiteTimestamp(v)
	case notNullTime:
		return binaryOf(oidTimestamptz, 8) && finiteTimestamp(v)
	}
	return false
}

// microsecondsToY2K is the PostgreSQL epoch (2000-01-01 UTC) in Unix
// microseconds.
const microsecondsToY2K = 946_684_800 * 1_000_000

// finiteTimestamp reports whether a binary timestamptz is not ±infinity.
func finiteTimestamp(v []byte) bool {
	us := int64(binary.BigEndian.Uint64(v))
	return us != math.MaxInt64 && us != math.MinInt64
}

// pgTimestamptz decodes a finite binary timestamptz (microseconds since
// 2000-01-01 UTC) as pgx does, in the local zone; the object layer keeps
// times in UTC.
func pgTimestamptz(v []byte) time.Time {
	us := int64(binary.BigEndian.Uint64(v))
	return time.Unix(microsecondsToY2K/1_000_000+us/1_000_000, (microsecondsToY2K%1_000_000*1_000)+(us%1_000_000*1_000))
}
