package db

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestDatabaseTroubleClasses(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	tests := map[string]struct {
		err               error
		unavailable, full bool
	}{
		"nil":                    {nil, false, false},
		"not found":              {fmt.Errorf("node x: %w", ErrNotFound), false, false},
		"unique violation":       {&pgconn.PgError{Code: pgUniqueViolation}, false, false},
		"pg admin shutdown":      {&Error{Action: "list nodes", Err: &pgconn.PgError{Code: "57P01"}}, true, false},
		"pg starting up":         {&pgconn.PgError{Code: "57P03"}, true, false},
		"pg connection failure":  {&pgconn.PgError{Code: "08006"}, true, false},
		"pg too many clients":    {&pgconn.PgError{Code: "53300"}, true, false},
		"pg disk full":           {&pgconn.PgError{Code: "53100"}, false, true},
		"pg syntax error":        {&pgconn.PgError{Code: "42601"}, false, false},
		"connection refused":     {fmt.Errorf("database: get node: %w", refused), true, false},
		"bad conn":               {driver.ErrBadConn, true, false},
		"pgx lost connection":    {errors.New("conn closed"), true, false},
		"mysql server shutdown":  {&mysql.MySQLError{Number: mysqlServerShutdown}, true, false},
		"mysql invalid conn":     {mysql.ErrInvalidConn, true, false},
		"mysql table full":       {&mysql.MySQLError{Number: mysqlRecordFileFull}, false, true},
		"mysql duplicate":        {&mysql.MySQLError{Number: mysqlDupEntry}, false, false},
		"ENOSPC":                 {&Error{Action: "save node", Err: syscall.ENOSPC}, false, true},
		"no rows is not trouble": {sql.ErrNoRows, false, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := IsUnavailable(tc.err); got != tc.unavailable {
				t.Errorf("IsUnavailable = %v, want %v", got, tc.unavailable)
			}
			if got := IsStorageFull(tc.err); got != tc.full {
				t.Errorf("IsStorageFull = %v, want %v", got, tc.full)
			}
		})
	}
}

// A real SQLITE_FULL: the file may not grow past max_page_count.
func TestSQLiteFullIsStorageFull(t *testing.T) {
	d, err := Open(t.Context(), "sqlite:///"+filepath.Join(t.TempDir(), "full.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := t.Context()
	if _, err := d.bun.ExecContext(ctx, "CREATE TABLE filler (v BLOB)"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.bun.ExecContext(ctx, "PRAGMA max_page_count = 20"); err != nil {
		t.Fatal(err)
	}
	var full error
	for range 100 {
		if _, err := d.bun.ExecContext(ctx, "INSERT INTO filler VALUES (randomblob(4000))"); err != nil {
			full = d.wrap(err, "insert filler")
			break
		}
	}
	if full == nil {
		t.Fatal("the capped database never filled up")
	}
	if !IsStorageFull(full) || IsUnavailable(full) {
		t.Fatalf("%v: storage full %v, unavailable %v", full, IsStorageFull(full), IsUnavailable(full))
	}
}
