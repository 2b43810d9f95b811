package db

import (
	"errors"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// Sentinel errors of this package; match them with errors.Is.
var (
	// ErrNotFound: the row an operation names does not exist.
	ErrNotFound = errors.New("not found")
	// ErrNodeLocked: another holder has the node's lease. The concrete
	// error is a *NodeLockedError.
	ErrNodeLocked = errors.New("node locked")
	// ErrLeaseLost: the caller no longer holds the lease it names (it
	// expired and was taken over, or was released); the caller must stop
	// acting on the node.
	ErrLeaseLost = errors.New("lease lost")
)

// Driver codes for a unique-constraint violation.
const (
	pgUniqueViolation       = "23505"
	mysqlDupEntry           = 1062
	mysqlDupEntryWithKey    = 1586
	sqliteConstraintUnique  = 2067 // SQLITE_CONSTRAINT_UNIQUE
	sqliteConstraintPrimary = 1555 // SQLITE_CONSTRAINT_PRIMARYKEY
)

// IsUniqueViolation reports whether err, or an error it wraps, is a
// duplicate-key error from any of the three drivers.
func IsUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == pgUniqueViolation
	}
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) {
		return myErr.Number == mysqlDupEntry || myErr.Number == mysqlDupEntryWithKey
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		return liteErr.Code() == sqliteConstraintUnique || liteErr.Code() == sqliteConstraintPrimary
	}
	return false
}
