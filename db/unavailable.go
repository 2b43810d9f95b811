package db

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// Driver codes of a database that is down, restarting or out of space.
const (
	sqliteBusy   = 5  // SQLITE_BUSY: another connection holds the write lock
	sqliteLocked = 6  // SQLITE_LOCKED
	sqliteIOErr  = 10 // SQLITE_IOERR (extended codes keep it in the low byte)
	sqliteFull   = 13 // SQLITE_FULL: the disk (or max_page_count) is full

	mysqlTooManyConnections = 1040
	mysqlServerShutdown     = 1053
	mysqlRecordFileFull     = 1114 // ER_RECORD_FILE_FULL: "The table is full"
	mysqlDiskFull           = 1021
	mysqlOutOfResources     = 1041
)

// IsUnavailable reports whether err says the database could not be reached
// or dropped the connection: refused or reset connections, a server
// shutting down or starting up (PostgreSQL 57P01-57P03, class 08), too many
// connections, SQLite's busy lock. Such a request failed for a reason of the
// moment; the same request may succeed once the database is back, so the
// API answers 503 rather than 500.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"), // connection exception
			pgErr.Code == "57P01", // admin_shutdown
			pgErr.Code == "57P02", // crash_shutdown
			pgErr.Code == "57P03", // cannot_connect_now
			pgErr.Code == "53300": // too_many_connections
			return true
		}
		return false
	}
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) {
		return myErr.Number == mysqlTooManyConnections || myErr.Number == mysqlServerShutdown
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		code := liteErr.Code() & 0xff
		return code == sqliteBusy || code == sqliteLocked
	}
	// A net.Error is not asked for: every syscall.Errno is one, ENOSPC too.
	var connectErr *pgconn.ConnectError
	var opErr *net.OpError
	switch {
	case errors.As(err, &connectErr), errors.As(err, &opErr),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, mysql.ErrInvalidConn),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	// pgx reports a connection it had already lost by these texts only.
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "failed to connect to")
}

// IsStorageFull reports whether err says the database has no space left:
// SQLite's SQLITE_FULL or an I/O error from a full file system, PostgreSQL's
// disk_full (53100), MySQL's disk and table full errors. Nothing of the
// failed write was applied; writes succeed again once space is freed, so
// the API answers 507 Insufficient Storage.
func IsStorageFull(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "53100"
	}
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) {
		return myErr.Number == mysqlRecordFileFull || myErr.Number == mysqlDiskFull || myErr.Number == mysqlOutOfResources
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		switch liteErr.Code() & 0xff {
		case sqliteFull:
			return true
		case sqliteIOErr:
			return errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "no space left")
		}
		return false
	}
	return errors.Is(err, syscall.ENOSPC)
}
