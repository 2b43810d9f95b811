package db

import (
	"context"
	"database/sql"
)

// Statements prepared once on SQLite.
//
// SQLite compiles a query's text into a program before running it, and
// database/sql's one-shot QueryContext compiles it again every time: for
// GET /v1/nodes/{uuid} on the embedded database, parsing and planning the
// node's 60-column SELECT and the traits query was a third of the
// request's CPU (docs/performance.md, issue 32). A *sql.Stmt is compiled
// on each pooled connection the first time that connection runs it and
// reused after; modernc's driver keeps the compiled program (reset, not
// finalized, between runs). PostgreSQL needs none of this (its
// connections prepare on second sight, pgmode.go), and MySQL keeps the
// text protocol its scanners were written for.

// prepared returns the pool's statement for text, preparing it on first
// use. Only fixed texts (a bounded set: bind parameters, never values)
// may come here: each is kept until Close.
func (d *DB) prepared(ctx context.Context, text string) (*sql.Stmt, error) {
	if st, ok := d.stmts.Load(text); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := d.bun.DB.PrepareContext(ctx, text)
	if err != nil {
		return nil, err
	}
	if prev, loaded := d.stmts.LoadOrStore(text, st); loaded {
		_ = st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// queryContext runs text (a fixed statement) with args: prepared once on
// SQLite, as given elsewhere.
func (d *DB) queryContext(ctx context.Context, text string, args ...any) (*sql.Rows, error) {
	if d.dialect != SQLite {
		return d.bun.DB.QueryContext(ctx, text, args...)
	}
	st, err := d.prepared(ctx, text)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}
