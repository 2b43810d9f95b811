package db_test

import (
	"context"
	"testing"

	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// On PostgreSQL a query is prepared only when its text comes back: the
// first run leaves nothing prepared on the connection, the second prepares
// it, later runs reuse it; a URL naming default_query_exec_mode keeps that
// mode for every query.
func TestPostgresPreparesOnSecondSight(t *testing.T) {
	ctx := context.Background()
	prepared := func(t *testing.T, dbh *db.DB, query string) int {
		t.Helper()
		conn, err := dbh.Bun().Conn(ctx) // one connection: prepared statements are per session
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		counts := make([]int, 0, 3)
		for range 3 {
			var n int
			if err := conn.QueryRowContext(ctx, query).Scan(&n); err != nil || n != 42 {
				t.Fatalf("%s: %d, %v", query, n, err)
			}
			var p int
			if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM pg_prepared_statements WHERE statement = ?", query).Scan(&p); err != nil {
				t.Fatal(err)
			}
			counts = append(counts, p)
		}
		return counts[0]*100 + counts[1]*10 + counts[2]
	}
	t.Run("default", func(t *testing.T) {
		dbh := dbtest.OpenEmpty(t, db.Postgres)
		if got := prepared(t, dbh, "SELECT 40 + 2 AS default_mode"); got != 11 {
			t.Errorf("prepared after runs 1, 2, 3: %03d, want 011", got)
		}
	})
	t.Run("exec", func(t *testing.T) {
		conn := dbtest.Connection(t, db.Postgres)
		sep := "?"
		if containsQuery(conn) {
			sep = "&"
		}
		dbh, err := db.Open(ctx, conn+sep+"default_query_exec_mode=exec", db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer dbh.Close()
		if got := prepared(t, dbh, "SELECT 40 + 2 AS exec_mode"); got != 0 {
			t.Errorf("prepared after runs 1, 2, 3: %03d, want 000", got)
		}
	})
}

func containsQuery(url string) bool {
	for _, c := range url {
		if c == '?' {
			return true
		}
	}
	return false
}
