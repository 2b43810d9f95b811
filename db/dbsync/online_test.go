package dbsync_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbsync"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/db/onlinemigrations"
)

// backfill is a test migration over a real column: resource_class NULL →
// opts["value"] (default "baremetal"), in batches.
func backfill(name string, minServiceVersion int) onlinemigrations.Migration {
	return onlinemigrations.Migration{
		Name: name, MinServiceVersion: minServiceVersion, Options: []string{"value"},
		Run: func(ctx context.Context, d *db.DB, maxCount int, opts map[string]string) (int, int, error) {
			value := "baremetal"
			if v, ok := opts["value"]; ok {
				value = v
			}
			return onlinemigrations.UpdateInBatches(ctx, d, "nodes",
				onlinemigrations.Expr{SQL: "resource_class IS NULL"},
				onlinemigrations.Expr{SQL: "resource_class = ?", Args: []any{value}}, maxCount)
		},
	}
}

// moveGroup is a second test migration: nodes in the default conductor
// group move to group "moved".
func moveGroup() onlinemigrations.Migration {
	return onlinemigrations.Migration{
		Name: "move_group",
		Run: func(ctx context.Context, d *db.DB, maxCount int, _ map[string]string) (int, int, error) {
			return onlinemigrations.UpdateInBatches(ctx, d, "nodes",
				onlinemigrations.Expr{SQL: "conductor_group = ''"},
				onlinemigrations.Expr{SQL: "conductor_group = 'moved'"}, maxCount)
		},
	}
}

func registry(t *testing.T, ms ...onlinemigrations.Migration) *onlinemigrations.Registry {
	t.Helper()
	r := &onlinemigrations.Registry{}
	for _, m := range ms {
		if err := r.Register(m); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func intp(n int) *int { return &n }

// TestOnlineDataMigrations follows ironic.md §6.3: --max-count stops at the
// budget (exit 1), a run without it works in passes of onlinemigrations.BatchSize until done
// (exit 0), and the budget spans migrations.
func TestOnlineDataMigrations(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		s, out := syncer(t, d)
		if err := s.CreateSchema(ctx); err != nil {
			t.Fatal(err)
		}
		dbh := open(t, s)
		insertNodes(t, dbh, ptr("1.0"), ptr("1.0"), ptr("1.0"))
		s.Registry = registry(t, backfill("backfill_resource_class", 0), moveGroup())

		steps := []struct {
			maxCount *int
			options  []string
			exit     int
			out      string
		}{
			{intp(2), nil, 1, "backfill_resource_class() migrated 2 of 3 objects.\n" +
				"Data migrations have not completed. Please re-run.\n"},
			{intp(3), []string{"backfill_resource_class.value=gpu"}, 1, "backfill_resource_class() migrated 1 of 1 objects.\n" +
				"move_group() migrated 2 of 3 objects.\n" +
				"Data migrations have not completed. Please re-run.\n"},
			{nil, nil, 0, fmt.Sprintf("Running batches of %d until migrations have been completed.\n", onlinemigrations.BatchSize) +
				"backfill_resource_class() migrated 0 of 0 objects.\n" +
				"move_group() migrated 1 of 1 objects.\n" +
				"Data migrations have completed.\n"},
			{intp(5), nil, 0, "backfill_resource_class() migrated 0 of 0 objects.\n" +
				"move_group() migrated 0 of 0 objects.\n" +
				"Data migrations have completed.\n"},
		}
		for i, st := range steps {
			out.Reset()
			err := s.OnlineDataMigrations(ctx, st.maxCount, st.options)
			if got := dbsync.ExitCode(err); got != st.exit {
				t.Errorf("step %d: exit %d (%v), want %d", i, got, err, st.exit)
			}
			if diff := cmp.Diff(st.out, out.String()); diff != "" {
				t.Errorf("step %d output (-want +got):\n%s", i, diff)
			}
		}
		var classes []string
		if err := dbh.Bun().NewSelect().Table("nodes").Column("resource_class").OrderExpr("id").Scan(ctx, &classes); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"baremetal", "baremetal", "gpu"}, classes); diff != "" {
			t.Errorf("backfilled values (-want +got):\n%s", diff)
		}
	})
}

func TestOnlineDataMigrationsRefusals(t *testing.T) {
	ctx := context.Background()
	boom := onlinemigrations.Migration{Name: "broken", Run: func(context.Context, *db.DB, int, map[string]string) (int, int, error) {
		return 0, 0, errors.New("boom")
	}}
	tests := map[string]struct {
		setup    func(t *testing.T, s *dbsync.Syncer)
		reg      []onlinemigrations.Migration
		maxCount *int
		options  []string
		exit     int
		want     []string // substrings of the error
	}{
		"max-count zero":  {maxCount: intp(0), exit: 127, want: []string{`"max-count" must be a positive value.`}},
		"malformed":       {options: []string{"foo"}, exit: 127, want: []string{"Malformed option foo"}},
		"malformed key":   {options: []string{"backfill=x"}, exit: 127, want: []string{"Malformed option backfill=x"}},
		"unknown name":    {reg: []onlinemigrations.Migration{backfill("backfill", 0)}, options: []string{"nope.k=v"}, exit: 127, want: []string{`unknown migration "nope"`, "valid migrations: backfill"}},
		"unknown key":     {reg: []onlinemigrations.Migration{backfill("backfill", 0)}, options: []string{"backfill.k=v"}, exit: 127, want: []string{`no option "k"`, "valid keys: value"}},
		"no schema":       {setup: func(*testing.T, *dbsync.Syncer) {}, exit: 2, want: []string{"the database has no schema"}},
		"failing":         {reg: []onlinemigrations.Migration{boom}, exit: 1, want: []string{"Error while running broken: boom."}},
		"unknown version": {setup: withNodes(ptr("0.1")), exit: 2, want: []string{"table nodes has 1 row at version 0.1"}},
		"old service": {
			setup: withServices(
				db.ServiceRegistration{Hostname: "h1", Binary: db.BinaryConductor, Release: "0.1.0", ServiceVersion: 1},
				db.ServiceRegistration{Hostname: "h2", Binary: db.BinaryAPI, Release: "0.2.0", ServiceVersion: 2}),
			reg:  []onlinemigrations.Migration{backfill("backfill", 2)},
			exit: 2,
			want: []string{`online migration backfill writes what only release 0.2 ("bellows") (service version 2) and newer can read`,
				"older: rivet-conductor on h1 (release 0.1.0, service version 1, unpinned, live)"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, _ := syncer(t, db.SQLite)
			if tc.setup != nil {
				tc.setup(t, s)
			} else if err := s.CreateSchema(ctx); err != nil {
				t.Fatal(err)
			}
			s.Registry = registry(t, tc.reg...)
			err := s.OnlineDataMigrations(ctx, tc.maxCount, tc.options)
			if got := dbsync.ExitCode(err); got != tc.exit {
				t.Errorf("exit %d (%v), want %d", got, err, tc.exit)
			}
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v lacks %q", err, w)
				}
			}
		})
	}
}

// TestServiceGateCountsStoppedServicesUntilForgotten: an old service that
// stopped cleanly may start again as it was (a rollback), so it blocks a
// migration until an operator forgets it or service_forget_timeout passes.
func TestServiceGateCountsStoppedServicesUntilForgotten(t *testing.T) {
	ctx := context.Background()
	for name, forget := range map[string]bool{"forgotten": true, "forget timeout": false} {
		t.Run(name, func(t *testing.T) {
			s, _ := syncer(t, db.SQLite)
			withServices(db.ServiceRegistration{Hostname: "h1", Binary: db.BinaryConductor, Release: "0.1.0", ServiceVersion: 1})(t, s)
			dbh := open(t, s)
			if err := dbh.MarkServiceOffline(ctx, "h1", db.BinaryConductor); err != nil {
				t.Fatal(err)
			}
			s.Registry = registry(t, backfill("backfill", 2))
			if err := s.OnlineDataMigrations(ctx, nil, nil); dbsync.ExitCode(err) != dbsync.ExitRefused ||
				!strings.Contains(err.Error(), "rivet-conductor on h1 (release 0.1.0, service version 1, unpinned, stopped") {
				t.Fatalf("a stopped 0.1 service: %v, want a refusal naming it", err)
			}
			if forget {
				if _, err := dbh.ForgetService(ctx, "h1", db.BinaryConductor); err != nil {
					t.Fatal(err)
				}
			} else {
				s.ForgetTimeout = time.Minute
				if _, err := dbh.Bun().NewUpdate().Model((*db.Service)(nil)).Set("updated_at = ?", time.Now().Add(-2*time.Minute)).
					Where("hostname = ?", "h1").Exec(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.OnlineDataMigrations(ctx, nil, nil); err != nil {
				t.Errorf("once the stopped service is gone: %v", err)
			}
		})
	}
}

func withNodes(versions ...*string) func(*testing.T, *dbsync.Syncer) {
	return func(t *testing.T, s *dbsync.Syncer) {
		if err := s.CreateSchema(context.Background()); err != nil {
			t.Fatal(err)
		}
		insertNodes(t, open(t, s), versions...)
	}
}

func withServices(regs ...db.ServiceRegistration) func(*testing.T, *dbsync.Syncer) {
	return func(t *testing.T, s *dbsync.Syncer) {
		if err := s.CreateSchema(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, r := range regs {
			if _, err := open(t, s).RegisterService(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
	}
}
