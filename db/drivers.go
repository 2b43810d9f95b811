package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/mysqldialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

func newBun(sqldb *sql.DB, d Dialect) *bun.DB {
	switch d {
	case Postgres:
		return bun.NewDB(sqldb, pgdialect.New())
	case MySQL:
		// DATETIME has no zone: bun must write UTC, as the session reads it.
		return bun.NewDB(sqldb, mysqldialect.New(mysqldialect.WithTimeLocation("UTC")))
	default:
		return bun.NewDB(sqldb, sqlitedialect.New())
	}
}

// openSQLite opens a file (WAL, so readers never wait for the writer) or an
// in-memory database, with foreign keys on, a busy timeout, and BEGIN
// IMMEDIATE so a read-then-write transaction waits instead of failing.
func openSQLite(c connection, o Options) (*sql.DB, error) {
	params := url.Values{}
	params.Set("_busy_timeout", strconv.FormatInt(o.SQLiteBusyTimeout.Milliseconds(), 10))
	params.Set("_foreign_keys", "1")
	params.Set("_txlock", "immediate")
	name := ":memory:"
	if !c.memory {
		if strings.ContainsAny(c.path, "?#") {
			return nil, fmt.Errorf("SQLite path %q must not contain '?' or '#'", c.path)
		}
		name = c.path
		params.Set("_journal_mode", "WAL")
	}
	return sql.Open("sqlite", name+"?"+params.Encode())
}

// openPostgres uses pgx's database/sql adapter. pgx itself understands every
// libpq URL parameter (sslmode, host=/socket/dir, …).
//
// Unless the URL names a default_query_exec_mode, statements that write
// run in pgx's exec mode (writesInExecMode).
func openPostgres(c connection, o Options) (*sql.DB, error) {
	u := *c.url
	u.Scheme = "postgres"
	q := u.Query()
	if q.Get("connect_timeout") == "" {
		q.Set("connect_timeout", strconv.Itoa(seconds(o.ConnectTimeout)))
	}
	if q.Get("application_name") == "" {
		q.Set("application_name", "rivet")
	}
	modeChosen := q.Get("default_query_exec_mode") != ""
	u.RawQuery = q.Encode()
	cfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, fmt.Errorf("malformed PostgreSQL URL: %w", err)
	}
	if modeChosen {
		return stdlib.OpenDB(*cfg), nil
	}
	return sql.OpenDB(writesInExecMode{stdlib.GetConnector(*cfg)}), nil
}

// writesInExecMode runs the queries that write (INSERT, UPDATE, DELETE:
// bun's INSERT … RETURNING goes through QueryContext) in pgx's exec mode,
// one round trip, and leaves reads in pgx's default mode, which prepares
// each new statement and caches it.
//
// Bun writes every value into the SQL text, so a write is nearly never
// repeated: the default mode spent a second round trip preparing each one
// (and more deallocating what fell out of the cache) for a statement that
// never comes back, 6-8 % of the conductor's and the API's CPU when
// enrolling nodes. A read may come back (a client polling one node), and
// the cache then saves its parsing and planning: GET node at concurrency
// 16 served 1,846 req/s with it against 1,447 in exec mode (see
// docs/performance.md), so reads keep it. pgx's Exec already uses the
// simple protocol, one round trip, for a statement without arguments.
type writesInExecMode struct{ driver.Connector }

func (c writesInExecMode) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		return conn, nil
	}
	return execModeConn{sc}, nil
}

// execModeConn is a pgx connection whose writes run in exec mode; every
// other method is pgx's.
type execModeConn struct{ *stdlib.Conn }

func (c execModeConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if isWrite(query) {
		args = append([]driver.NamedValue{{Value: pgx.QueryExecModeExec}}, args...)
	}
	return c.Conn.QueryContext(ctx, query, args)
}

// isWrite reports whether query starts with INSERT, UPDATE or DELETE.
func isWrite(query string) bool {
	query = strings.TrimLeft(query, " \t\r\n(")
	if len(query) < 6 {
		return false
	}
	switch strings.ToUpper(query[:6]) {
	case "INSERT", "UPDATE", "DELETE":
		return true
	}
	return false
}

// mysqlParams are the URL query parameters Rivet accepts for MySQL, from
// SQLAlchemy/PyMySQL spellings; anything else is an error rather than
// silently ignored.
var mysqlParams = []string{"charset", "connect_timeout", "read_timeout", "tls", "unix_socket", "write_timeout"}

// openMySQL builds a go-sql-driver config: parseTime so DATETIME scans into
// time.Time, clientFoundRows so RowsAffected counts matched rows (lease and
// heartbeat updates rely on it), UTC both ways, utf8mb4.
func openMySQL(c connection, o Options) (*sql.DB, error) {
	u := c.url
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	if cfg.DBName == "" || strings.Contains(cfg.DBName, "/") {
		return nil, fmt.Errorf("MySQL URL needs one database name as its path, e.g. mysql://rivet:pass@host/rivet")
	}
	cfg.ParseTime = true
	cfg.ClientFoundRows = true
	cfg.Loc = time.UTC
	cfg.Timeout = o.ConnectTimeout
	// Server-side NOW() and CURRENT_TIMESTAMP defaults in UTC too.
	cfg.Params = map[string]string{"time_zone": "'+00:00'"}
	if err := cfg.Apply(mysql.Charset("utf8mb4", "utf8mb4_bin")); err != nil {
		return nil, err
	}
	cfg.Net, cfg.Addr = "tcp", u.Host
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:3306"
	} else if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		cfg.Addr = net.JoinHostPort(u.Hostname(), "3306")
	}
	for key, vals := range u.Query() {
		val := vals[len(vals)-1]
		var err error
		switch key {
		case "charset":
			if !strings.EqualFold(val, "utf8") && !strings.EqualFold(val, "utf8mb4") {
				err = fmt.Errorf("charset %q is not supported: Rivet always uses utf8mb4", val)
			}
		case "unix_socket":
			cfg.Net, cfg.Addr = "unix", val
		case "tls":
			cfg.TLSConfig = val
		case "connect_timeout":
			cfg.Timeout, err = durationParam(key, val)
		case "read_timeout":
			cfg.ReadTimeout, err = durationParam(key, val)
		case "write_timeout":
			cfg.WriteTimeout, err = durationParam(key, val)
		default:
			err = fmt.Errorf("unsupported MySQL URL parameter %q (accepted: %s)", key, strings.Join(mysqlParams, ", "))
		}
		if err != nil {
			return nil, err
		}
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("malformed MySQL URL: %w", err)
	}
	return sql.OpenDB(conn), nil
}

// durationParam reads seconds as PyMySQL does, or a Go duration.
func durationParam(key, val string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(val, 64); err == nil && n >= 0 {
		return time.Duration(n * float64(time.Second)), nil
	}
	if d, err := time.ParseDuration(val); err == nil && d >= 0 {
		return d, nil
	}
	return 0, fmt.Errorf("%s=%q is not a number of seconds", key, val)
}

// seconds rounds d up to whole seconds, at least 1 (libpq's unit).
func seconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}
