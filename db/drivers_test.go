package db

import (
	"context"
	"os"
	"testing"
)

func TestIsWrite(t *testing.T) {
	for q, want := range map[string]bool{
		`INSERT INTO "nodes" ("id") VALUES (DEFAULT) RETURNING "id"`: true,
		"  update nodes set x = 1":                                   true,
		"\n(DELETE FROM nodes)":                                      true,
		`SELECT "n"."id" FROM "nodes" AS "n"`:                        false,
		"WITH x AS (INSERT INTO t VALUES (1) RETURNING id) SELECT 1": false,
		"INSERT":    true,
		"INSER":     false,
		"":          false,
		"selectid ": false,
	} {
		if got := isWrite(q); got != want {
			t.Errorf("isWrite(%q) = %t, want %t", q, got, want)
		}
	}
}

// A PostgreSQL connection opened without a default_query_exec_mode runs
// writes through execModeConn, and they work: RETURNING included.
func TestPostgresWritesInExecMode(t *testing.T) {
	dsn := os.Getenv("RIVET_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("RIVET_TEST_POSTGRES_DSN is unset")
	}
	d, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	conn, err := d.bun.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Raw(func(dc any) error {
		if _, ok := dc.(execModeConn); !ok {
			t.Errorf("driver connection is a %T, want execModeConn", dc)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "CREATE TEMPORARY TABLE exec_mode_t (id serial PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"a", "b"} {
		var id int
		var got string
		if err := conn.QueryRowContext(ctx, "INSERT INTO exec_mode_t (v) VALUES ('"+v+"') RETURNING id, v").Scan(&id, &got); err != nil || got != v || id == 0 {
			t.Fatalf("insert returning: %d %q %v", id, got, err)
		}
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM exec_mode_t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("select: %d %v", n, err)
	}
}
