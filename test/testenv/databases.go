package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // PostgreSQL driver for creating test databases
)

// Defaults match the services a go-svc machine starts (trust auth on
// PostgreSQL, root without a password on MariaDB).
const (
	defaultPostgresDSN = "postgresql://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	defaultMySQLDSN    = "mysql://root@127.0.0.1:3306/test"
)

// RequirePostgres creates a fresh PostgreSQL database for t and returns its
// connection URL (postgresql://…), in the form [database] connection takes.
// The server comes from RIVET_TEST_POSTGRES_DSN (default: local trust auth).
func RequirePostgres(t testing.TB) string {
	t.Helper()
	base := envOr("RIVET_TEST_POSTGRES_DSN", defaultPostgresDSN)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("RIVET_TEST_POSTGRES_DSN: %v", err)
	}
	admin := *u
	admin.Scheme = "postgres"
	db, err := open(t, "pgx", admin.String())
	if err != nil {
		Unavailable(t, fmt.Sprintf("PostgreSQL at %s unreachable: %v", u.Host, err))
	}
	name := uniqueName()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		db.Close()
		t.Fatalf("create test database %s: %v", name, err)
	}
	t.Cleanup(func() {
		defer db.Close()
		if _, err := db.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop test database %s: %v", name, err)
		}
	})
	out := *u
	out.Scheme = "postgresql"
	out.Path = "/" + name
	return out.String()
}

// RequireMySQL creates a fresh MySQL/MariaDB database for t and returns its
// connection URL (mysql://…). The server comes from RIVET_TEST_MYSQL_DSN
// (default: local root without a password).
func RequireMySQL(t testing.TB) string {
	t.Helper()
	base := envOr("RIVET_TEST_MYSQL_DSN", defaultMySQLDSN)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("RIVET_TEST_MYSQL_DSN: %v", err)
	}
	cfg := mysql.NewConfig()
	cfg.Net = "tcp"
	cfg.Addr = u.Host
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	db, err := open(t, "mysql", cfg.FormatDSN())
	if err != nil {
		Unavailable(t, fmt.Sprintf("MySQL/MariaDB at %s unreachable: %v", u.Host, err))
	}
	name := uniqueName()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		db.Close()
		t.Fatalf("create test database %s: %v", name, err)
	}
	t.Cleanup(func() {
		defer db.Close()
		if _, err := db.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name); err != nil {
			t.Logf("drop test database %s: %v", name, err)
		}
	})
	out := *u
	out.Scheme = "mysql"
	out.Path = "/" + name
	return out.String()
}

func open(t testing.TB, driver, dsn string) (*sql.DB, error) {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func uniqueName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "rivet_t_" + strings.ToLower(hex.EncodeToString(b))
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
