package upgrade

import (
	"context"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/db/onlinemigrations"
)

// On the schema release 0.1 left, before `rivet dbsync upgrade`, status and
// check with this release's binary must still answer (the procedure runs
// `rivet upgrade check` there): "Database schema" fails and says to run
// dbsync upgrade, and the online migrations, which read the columns that
// upgrade adds, are reported as not countable yet instead of failing the
// whole command.
func TestStatusBeforeTheSchemaUpgrade(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.OpenEmpty(t, d)
		dbtest.MigrateUntil(t, dbh, dbtest.Release01Schema)
		mreg := &onlinemigrations.Registry{}
		if err := onlinemigrations.Install(mreg, onlinemigrations.Options{}); err != nil {
			t.Fatal(err)
		}
		if len(mreg.Migrations()) == 0 {
			t.Fatal("no online migration registered: nothing to test")
		}
		st, err := Collect(ctx, dbh, release.Default(), mreg, db.Liveness{Timeout: time.Minute})
		if err != nil {
			t.Fatalf("status before dbsync upgrade: %v", err)
		}
		if len(st.Schema.Pending) == 0 {
			t.Fatal("no schema migration pending after release 0.1's schema: nothing to test")
		}
		for _, m := range st.Migrations {
			if m.Pending != -1 {
				t.Errorf("migration %s: pending %d before the schema upgrade, want -1 (unknown)", m.Name, m.Pending)
			}
		}
		rs, err := Check(ctx, dbh, release.Default(), mreg, db.Liveness{Timeout: time.Minute})
		if err != nil {
			t.Fatalf("check before dbsync upgrade: %v", err)
		}
		if c := codes(rs); c["Database schema"] != Failure || c["Online data migrations"] != Success {
			t.Fatalf("check before dbsync upgrade: %+v", rs)
		}
	})
}
