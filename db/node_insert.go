package db

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
)

// Writing new nodes on PostgreSQL without bun's query builder.
//
// Enrolment writes nodes through the conductor's group commit
// (Store.CreateMany). Through bun a batch was a transaction of four round
// trips (BEGIN; a multi-row INSERT with every value written into its text,
// a statement PostgreSQL parsed and planned anew each time; a SELECT of
// the ids by uuid; COMMIT), and a lone node an INSERT parsed anew. Here
// every node of a batch is the same one-row INSERT … RETURNING id with
// bind parameters, which pgx prepares once per connection, and the batch
// goes out as one pipeline ending in one Sync: a single round trip, run by
// PostgreSQL as one implicit transaction, so all of it is kept or none.
// The row's values come from the destinations nodeDest gives for reading,
// so a new column needs nothing more here; TestCreateNodesTypedMatchesBun
// holds the rows written equal to bun's.

// nodeInsert is the statement inserting one node row, and its columns in
// the order of its parameters.
type nodeInsert struct {
	text string
	cols []string
}

var (
	nodeInsertOnce sync.Once
	nodeInsertStmt *nodeInsert // nil: a column nodeDest does not know
)

// nodeInsertFor returns the PostgreSQL statement inserting a node, or nil
// when the typed path cannot serve.
func (s *Store) nodeInsertFor() *nodeInsert {
	nodeInsertOnce.Do(func() { nodeInsertStmt = s.buildNodeInsert() })
	return nodeInsertStmt
}

func (s *Store) buildNodeInsert() *nodeInsert {
	table := s.db.bun.Table(reflect.TypeFor[Node]())
	var probe Node
	ins := &nodeInsert{}
	var names, params []string
	for _, f := range table.Fields {
		if f.Name == "id" || slices.Contains(leaseColumns, f.Name) {
			continue // the id is the database's; the lease columns keep their defaults
		}
		if probe.nodeDest(f.Name) == nil {
			return nil
		}
		ins.cols = append(ins.cols, f.Name)
		names = append(names, `"`+f.Name+`"`)
		params = append(params, "$"+strconv.Itoa(len(params)+1))
	}
	ins.text = `INSERT INTO "` + table.Name + `" (` + strings.Join(names, ", ") + ") VALUES (" +
		strings.Join(params, ", ") + `) RETURNING "id"`
	return ins
}

// errNoTypedInsert says that the typed insert cannot serve (a column
// nodeDest does not know); the caller writes through bun.
var errNoTypedInsert = errors.New("db: no typed insert for nodes")

// insertNodesPG writes rows (stamped, ids unset) in one pipeline and sets
// their ids. It returns errNoTypedInsert when it cannot serve, without
// writing anything. kept reports, with an error, that the rows may have
// been kept: the error is not PostgreSQL's answer to a statement (which
// aborts the implicit transaction: nothing kept) but the connection's, for
// which whether the commit happened is unknown.
func (s *Store) insertNodesPG(ctx context.Context, rows []*Node) (kept bool, err error) {
	ins := s.nodeInsertFor()
	if ins == nil {
		return false, errNoTypedInsert
	}
	batch := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(rows))}
	for _, r := range rows {
		r.stampInsert()
		args := make([]any, len(ins.cols))
		for i, c := range ins.cols {
			v, err := insertArg(r.nodeDest(c))
			if err != nil {
				return false, fmt.Errorf("db: nodes.%s: %w", c, err)
			}
			args[i] = v
		}
		batch.Queue(ins.text, args...)
	}
	sent := false
	err = s.withPgx(ctx, func(pc *pgx.Conn) error {
		sent = true
		br := pc.SendBatch(ctx, batch)
		for _, r := range rows {
			if err := br.QueryRow().Scan(&r.ID); err != nil {
				_ = br.Close()
				return err
			}
		}
		return br.Close()
	})
	if err != nil {
		for _, r := range rows {
			r.ID = 0
		}
		var pgErr *pgconn.PgError
		return sent && !errors.As(err, &pgErr), err
	}
	return false, nil
}

// insertArg is the parameter value of a column whose destination (from
// nodeDest) is d: what bun would write for it.
func insertArg(d any) (any, error) {
	switch d := d.(type) {
	case *int64:
		return *d, nil
	case nullInt64:
		if *d.p == nil {
			return nil, nil
		}
		return **d.p, nil
	case *string:
		return *d, nil
	case nullString:
		if *d.p == nil {
			return nil, nil
		}
		return **d.p, nil
	case *bool:
		return *d, nil
	case nullBool:
		if *d.p == nil {
			return nil, nil
		}
		return **d.p, nil
	case *JSONObject:
		return d.Value()
	case *bun.NullTime:
		if d.IsZero() {
			return nil, nil
		}
		return d.Time, nil
	case notNullTime:
		return *d.p, nil
	}
	return nil, fmt.Errorf("no value for a %T", d)
}
