package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"
)

// Options tune the connection pool. The zero value is usable; field names
// follow the [database] options they come from.
type Options struct {
	// MaxOpenConnections caps open connections; 0 means no cap. An
	// in-memory SQLite database always uses exactly one.
	MaxOpenConnections int
	// MaxIdleConnections caps idle connections; 0 keeps database/sql's
	// default (2).
	MaxIdleConnections int
	// ConnectionMaxLifetime recycles connections older than this; 0 keeps
	// them forever.
	ConnectionMaxLifetime time.Duration
	// ConnectTimeout bounds establishing a connection, including the check
	// Open makes; 0 means DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// SQLiteBusyTimeout is how long SQLite waits for a competing writer;
	// 0 means DefaultSQLiteBusyTimeout.
	SQLiteBusyTimeout time.Duration
}

// Defaults applied to a zero Options field.
const (
	DefaultConnectTimeout    = 10 * time.Second
	DefaultSQLiteBusyTimeout = 5 * time.Second
)

func (o Options) withDefaults() Options {
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.SQLiteBusyTimeout <= 0 {
		o.SQLiteBusyTimeout = DefaultSQLiteBusyTimeout
	}
	return o
}

// DB is an open Rivet database. It is safe for concurrent use.
type DB struct {
	bun      *bun.DB
	dialect  Dialect
	masked   string
	password string
	// stmts holds the SQLite statements prepared once for the pool
	// (prepared.go): query text → *sql.Stmt.
	stmts sync.Map
}

// Open connects to the database named by a [database] connection URL and
// checks that it answers. Accepted forms:
//
//	sqlite://  sqlite:///:memory:      in-memory (one connection)
//	sqlite:///relative/path.db         relative to the working directory
//	sqlite:////absolute/path.db
//	postgresql://user:pass@host:5432/rivet?sslmode=…  (postgres://, postgresql+psycopg2://)
//	mysql://user:pass@host:3306/rivet?charset=utf8mb4 (mysql+pymysql://)
//
// A malformed URL, an unknown dialect or an unreachable server is one error
// naming the problem and the URL with its password masked.
func Open(ctx context.Context, connection string, opts Options) (*DB, error) {
	c, err := parseConnection(connection)
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	var sqldb *sql.DB
	var dialectErr error
	switch c.dialect {
	case SQLite:
		sqldb, dialectErr = openSQLite(c, opts)
	case Postgres:
		sqldb, dialectErr = openPostgres(c, opts)
	case MySQL:
		sqldb, dialectErr = openMySQL(c, opts)
	}
	if dialectErr != nil {
		return nil, fmt.Errorf("database %s: %s", c.masked, scrub(dialectErr.Error(), c.password))
	}
	applyPool(sqldb, c, opts)
	pctx, cancel := context.WithTimeout(ctx, opts.ConnectTimeout)
	defer cancel()
	if err := sqldb.PingContext(pctx); err != nil {
		sqldb.Close()
		return nil, connectError(err, c)
	}
	// Only now: bun's MySQL dialect queries the server version (and logs
	// on failure) as it is created.
	return &DB{bun: newBun(sqldb, c.dialect), dialect: c.dialect, masked: c.masked, password: c.password}, nil
}

func applyPool(sqldb *sql.DB, c connection, o Options) {
	if c.memory {
		// Every connection to :memory: is a separate, empty database, and
		// closing the last one discards the data.
		sqldb.SetMaxOpenConns(1)
		sqldb.SetMaxIdleConns(1)
		sqldb.SetConnMaxLifetime(0)
		sqldb.SetConnMaxIdleTime(0)
		return
	}
	if o.MaxOpenConnections > 0 {
		sqldb.SetMaxOpenConns(o.MaxOpenConnections)
	}
	if o.MaxIdleConnections > 0 {
		sqldb.SetMaxIdleConns(o.MaxIdleConnections)
	}
	if o.ConnectionMaxLifetime > 0 {
		sqldb.SetConnMaxLifetime(o.ConnectionMaxLifetime)
	}
}

// connectError explains a failed first contact in one line.
func connectError(err error, c connection) error {
	msg := oneLine(scrub(err.Error(), c.password))
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("database %s: cannot connect: no answer within the connect timeout", c.masked)
	case c.dialect == SQLite && c.path != "":
		return fmt.Errorf("database %s: cannot open %s (does its directory exist and is it writable?): %s", c.masked, c.path, msg)
	}
	return fmt.Errorf("database %s: cannot connect: %s", c.masked, msg)
}

// oneLine folds a multi-line driver message (pgx lists each attempt on its
// own line, often the same one twice: TLS, then plain) into one line
// without repeats.
func oneLine(msg string) string {
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if l != "" && !slices.Contains(parts, l) {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

// Bun returns the bun handle for queries. Callers must follow the package
// rules (RowsAffected, not RETURNING; UTC times).
func (d *DB) Bun() *bun.DB { return d.bun }

// Dialect returns the database's SQL dialect.
func (d *DB) Dialect() Dialect { return d.dialect }

// String returns the connection URL with its password masked.
func (d *DB) String() string { return d.masked }

// Close closes the prepared statements and every connection of the pool.
func (d *DB) Close() error {
	d.stmts.Range(func(_, st any) bool {
		_ = st.(*sql.Stmt).Close()
		return true
	})
	return d.bun.Close()
}

// wrap names the database and the action in an error, minus any password.
func (d *DB) wrap(err error, action string) error {
	if err == nil {
		return nil
	}
	return &Error{Action: action, Err: err, password: d.password}
}

// Error is a failed database operation. Its message names the action and is
// scrubbed of the connection password; Unwrap gives the driver's error.
type Error struct {
	Action   string
	Err      error
	password string
}

// Error names the action; the password never appears.
func (e *Error) Error() string {
	return "database: " + e.Action + ": " + scrub(e.Err.Error(), e.password)
}

// Unwrap returns the driver's error.
func (e *Error) Unwrap() error { return e.Err }
