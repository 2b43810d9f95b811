package migrations_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/db/migrations"
)

// TestDialectsHaveTheSameMigrations: a migration exists for every dialect
// or none, and only as an up file (Rivet rolls forward).
func TestDialectsHaveTheSameMigrations(t *testing.T) {
	names := map[db.Dialect][]string{}
	for _, d := range db.Dialects() {
		fsys, err := migrations.Files(d)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := fs.ReadDir(fsys, ".")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".up.sql") {
				t.Errorf("%s/%s: only <timestamp>_<name>[.tx].up.sql files belong here", d, e.Name())
			}
			name, _, _ := strings.Cut(e.Name(), ".")
			names[d] = append(names[d], name)
		}
	}
	for _, d := range db.Dialects()[1:] {
		if diff := cmp.Diff(names[db.Dialects()[0]], names[d]); diff != "" {
			t.Errorf("migrations of %s differ from %s (-%s +%s):\n%s", d, db.Dialects()[0], db.Dialects()[0], d, diff)
		}
	}
}

func TestMigrateIsIdempotent(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.OpenEmpty(t, d)
		m, err := migrations.NewMigrator(dbh)
		if err != nil {
			t.Fatal(err)
		}
		st, err := m.Status(ctx)
		if err != nil || st.Current() != "" || len(st.Pending) == 0 {
			t.Fatalf("empty database status %+v, %v", st, err)
		}
		first, err := m.Migrate(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(st.Pending, first); diff != "" {
			t.Errorf("first run applied (-pending +applied):\n%s", diff)
		}
		second, err := m.Migrate(ctx, nil)
		if err != nil || len(second) != 0 {
			t.Errorf("second run applied %v, %v; want nothing", second, err)
		}
		st, err = m.Status(ctx)
		if err != nil || st.Current() != first[len(first)-1] || len(st.Pending) != 0 || len(st.Unknown) != 0 {
			t.Errorf("status after migrating %+v, %v", st, err)
		}
		tables, err := dbh.Tables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"bun_migration_locks", "bun_migrations", "chassis", "conductor_hardware_interfaces", "conductors", "nodes", "portgroups", "ports", "services"} {
			if !slices.Contains(tables, want) {
				t.Errorf("table %s missing; have %v", want, tables)
			}
		}
	})
}

// TestMigrationLock: while one run holds the lock (or crashed holding it) a
// second run is refused with a message saying what to do; unlock clears it.
func TestMigrationLock(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.OpenEmpty(t, d)
		crashed, err := migrations.NewMigrator(dbh)
		if err != nil {
			t.Fatal(err)
		}
		if err := crashed.Init(ctx); err != nil {
			t.Fatal(err)
		}
		before := time.Now().UTC().Add(-time.Minute)
		if err := crashed.Lock(ctx); err != nil {
			t.Fatal(err)
		}

		second, _ := migrations.NewMigrator(dbh)
		_, err = second.Migrate(ctx, func(context.Context) error {
			t.Error("precheck ran without the lock")
			return nil
		})
		var locked *migrations.LockedError
		if !errors.As(err, &locked) {
			t.Fatalf("second run: %v, want *LockedError", err)
		}
		if locked.Since.Before(before) || locked.Since.After(time.Now().UTC().Add(time.Minute)) {
			t.Errorf("lock taken at %v, want about now", locked.Since)
		}
		for _, want := range []string{"another dbsync holds the migration lock since " + locked.Since.Format(time.RFC3339), "run `rivet dbsync unlock`"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("message %q lacks %q", err, want)
			}
		}

		held, since, err := second.Unlock(ctx)
		if err != nil || !held || !since.Equal(locked.Since) {
			t.Fatalf("unlock: held %v since %v, %v", held, since, err)
		}
		if held, _, err := second.Unlock(ctx); err != nil || held {
			t.Errorf("second unlock: held %v, %v; want not held", held, err)
		}
		if _, err := second.Migrate(ctx, nil); err != nil {
			t.Fatalf("migrate after unlock: %v", err)
		}
		// Migrate released its own lock.
		if err := crashed.Lock(ctx); err != nil {
			t.Errorf("lock after a finished run: %v", err)
		}
	})
}

// TestPrecheckRefusalAppliesNothing: a refused precheck leaves the schema
// and the lock as they were.
func TestPrecheckRefusalAppliesNothing(t *testing.T) {
	ctx := context.Background()
	dbh := dbtest.OpenEmpty(t, db.SQLite)
	m, _ := migrations.NewMigrator(dbh)
	refuse := errors.New("refused")
	if _, err := m.Migrate(ctx, func(context.Context) error { return refuse }); !errors.Is(err, refuse) {
		t.Fatalf("Migrate: %v, want the precheck's error", err)
	}
	if has, _ := dbh.HasTable(ctx, "nodes"); has {
		t.Error("nodes created despite the refusal")
	}
	if err := m.Lock(ctx); err != nil {
		t.Errorf("lock left behind: %v", err)
	}
}

// TestMySQLInitialMigrationResumes: MySQL cannot run DDL in a transaction,
// so a failed first run leaves some tables behind; running again finishes.
func TestMySQLInitialMigrationResumes(t *testing.T) {
	ctx := context.Background()
	dbh := dbtest.OpenEmpty(t, db.MySQL)
	fsys, err := migrations.Files(db.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(fsys, "20261122000000_initial.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "--bun:split")
	if _, err := dbh.Bun().ExecContext(ctx, first); err != nil {
		t.Fatalf("first statement: %v", err)
	}
	m, _ := migrations.NewMigrator(dbh)
	if _, err := m.Migrate(ctx, nil); err != nil {
		t.Fatalf("migrate over a partly applied schema: %v", err)
	}
}
