package dbsync_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbsync"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/db/migrations"
)

// syncer returns a Syncer on a fresh empty database of dialect d and the
// buffer its output goes to.
func syncer(t *testing.T, d db.Dialect) (*dbsync.Syncer, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	// One connection: any query nested in another's open rows or
	// transaction would deadlock here rather than in production.
	return &dbsync.Syncer{Connection: dbtest.Connection(t, d), Options: db.Options{MaxOpenConnections: 1}, Out: &out}, &out
}

// open opens the Syncer's database for a test to poke at.
func open(t *testing.T, s *dbsync.Syncer) *db.DB {
	t.Helper()
	dbh, err := db.Open(context.Background(), s.Connection, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dbh.Close() })
	return dbh
}

func insertNodes(t *testing.T, dbh *db.DB, versions ...*string) {
	t.Helper()
	for i, v := range versions {
		n := &db.Node{UUID: fmt.Sprintf("10000000-0000-0000-0000-%012d", i), Driver: "fake-hardware", Version: v}
		if _, err := dbh.Bun().NewInsert().Model(n).Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func ptr(s string) *string { return &s }

// migrationNames lists the schema migrations of dialect d, oldest first.
func migrationNames(t *testing.T, d db.Dialect) []string {
	t.Helper()
	set, err := migrations.Set(d)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range set.Sorted() {
		names = append(names, m.String())
	}
	return names
}

func TestCreateSchemaThenUpgradeIsIdempotent(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		s, out := syncer(t, d)
		names := migrationNames(t, d)
		last := names[len(names)-1]
		if err := s.CreateSchema(ctx); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "Created the schema: applied "+strings.Join(names, ", ")+".") {
			t.Errorf("create-schema said %q", out)
		}
		err := s.CreateSchema(ctx)
		if dbsync.ExitCode(err) != dbsync.ExitRefused || !strings.Contains(err.Error(), "create-schema needs an empty database") {
			t.Errorf("second create-schema: exit %d, %v", dbsync.ExitCode(err), err)
		}
		insertNodes(t, open(t, s), ptr("1.0"))
		for i := range 2 {
			out.Reset()
			if err := s.Upgrade(ctx); err != nil {
				t.Fatalf("upgrade %d: %v", i, err)
			}
			if want := "The database schema is up to date (" + last + ").\n"; out.String() != want {
				t.Errorf("upgrade %d said %q, want %q", i, out, want)
			}
		}
		out.Reset()
		if err := s.Version(ctx); err != nil || out.String() != last+"\n" {
			t.Errorf("version: %q, %v", out, err)
		}
	})
}

func TestUpgradeEmptyDatabase(t *testing.T) {
	ctx := context.Background()
	s, out := syncer(t, db.SQLite)
	if err := s.Version(ctx); err != nil || !strings.HasPrefix(out.String(), "None\npending: 20261122000000_initial") {
		t.Errorf("version of an empty database: %q, %v", out, err)
	}
	out.Reset()
	want := "Upgraded the database schema: applied " + strings.Join(migrationNames(t, db.SQLite), ", ") + ".\n"
	if err := s.Upgrade(ctx); err != nil || out.String() != want {
		t.Errorf("upgrade: %q, %v", out, err)
	}
}

// TestUpgradeRefusesUnknownVersions: rows this release cannot read stop the
// upgrade with exit 2 before the schema moves, naming table, versions,
// counts and what is supported.
func TestUpgradeRefusesUnknownVersions(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		s, _ := syncer(t, d)
		if err := s.CreateSchema(ctx); err != nil {
			t.Fatal(err)
		}
		insertNodes(t, open(t, s), ptr("9.9"), ptr("1.0"), nil, ptr("9.9"))
		err := s.Upgrade(ctx)
		if got := dbsync.ExitCode(err); got != dbsync.ExitRefused {
			t.Fatalf("exit %d (%v), want 2", got, err)
		}
		want := `The database is not compatible with this release of Rivet (` + release.Current + `): ` +
			`table nodes has 2 rows at version 9.9 and 1 row at version NULL (Node versions supported: ` + nodeVersions(t) + `). ` +
			`Please run "rivet dbsync online-data-migrations" using the previous release.`
		if err.Error() != want {
			t.Errorf("message:\n got %s\nwant %s", err, want)
		}
		// The refusal released the lock: fixing the rows lets upgrade run.
		if _, err := open(t, s).Bun().NewUpdate().Table("nodes").Set("version = '1.0'").Where("1 = 1").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Upgrade(ctx); err != nil {
			t.Errorf("upgrade after fixing rows: %v", err)
		}
	})
}

// nodeVersions lists the Node versions HEAD reads, as the message names them.
func nodeVersions(t *testing.T) string {
	t.Helper()
	var out []string
	for _, v := range release.Default().Head().Objects["Node"] {
		out = append(out, v.String())
	}
	slices.Reverse(out)
	return strings.Join(out, ", ")
}
