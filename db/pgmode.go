package db

import (
	"context"
	"database/sql/driver"
	"hash/maphash"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Prepared on second sight.
//
// Bun writes every value into the SQL text, so most statements Rivet
// sends are seen once: a query naming one node, an INSERT … RETURNING of a
// new one. pgx's default mode prepares every statement (one round trip),
// then executes it (another) and caches it; its "exec" mode sends parse,
// bind and execute in one round trip and keeps nothing, so the server
// parses and plans the statement every time. Neither suits both kinds of
// query: enrolment (every statement new) is faster in exec mode, a client
// polling one node (the same text again and again) with the cache
// (docs/performance.md). A pgx connection here therefore runs a query in
// exec mode the first time its text is seen, and through the statement
// cache (statementCacheCapacity per connection) once the text comes back.
// A URL that names default_query_exec_mode gets that mode for everything.
//
// pgx itself always uses the simple protocol (one round trip) for a
// statement without arguments run as an Exec; the policy is about queries.

// recentQueries remembers hashes of recently seen query texts, in two
// generations of at most half its size each: a text seen since the older
// generation began counts as seen.
type recentQueries struct {
	mu        sync.Mutex
	seed      maphash.Seed
	size      int
	cur, prev map[uint64]struct{}
}

func newRecentQueries(size int) *recentQueries {
	return &recentQueries{seed: maphash.MakeSeed(), size: max(size/2, 1), cur: map[uint64]struct{}{}}
}

// seen reports whether query was seen recently, and remembers it.
func (r *recentQueries) seen(query string) bool {
	h := maphash.String(r.seed, query)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.cur[h]; ok {
		return true
	}
	_, ok := r.prev[h]
	if len(r.cur) >= r.size {
		r.prev, r.cur = r.cur, make(map[uint64]struct{}, r.size)
	}
	r.cur[h] = struct{}{}
	return ok
}

// recentQueriesSize is how many query texts a service remembers. A text
// must come back before that many others went by to be prepared.
const recentQueriesSize = 4096

// secondSightConnector wraps pgx's connector so that its connections
// follow the policy above.
type secondSightConnector struct {
	driver.Connector
	recent *recentQueries
}

func (c secondSightConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		return conn, nil
	}
	return &secondSightConn{Conn: sc, recent: c.recent}, nil
}

// secondSightConn is a pgx connection (every method of *stdlib.Conn, so
// database/sql sees the same capabilities) whose queries without arguments
// run in exec mode the first time their text is seen.
type secondSightConn struct {
	*stdlib.Conn
	recent *recentQueries
}

// firstSight is the argument that selects exec mode for one query: pgx
// takes a leading QueryExecMode argument as an option, not a parameter.
var firstSight = []driver.NamedValue{{Ordinal: 1, Value: pgx.QueryExecModeExec}}

func (c *secondSightConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if len(args) == 0 && !c.recent.seen(query) {
		args = firstSight
	}
	return c.Conn.QueryContext(ctx, query, args)
}
