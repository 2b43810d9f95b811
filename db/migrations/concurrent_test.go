package migrations_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/db/migrations"
)

// TestConcurrentMigrate: several dbsync processes started at once (one
// handle each) never apply a migration twice. Each either applies the
// schema, finds it current, or is refused by the lock.
func TestConcurrentMigrate(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		conn := dbtest.Connection(t, d)
		const runs = 4
		var wg sync.WaitGroup
		start := make(chan struct{})
		applied := make([][]string, runs)
		errs := make([]error, runs)
		for i := range runs {
			dbh, err := db.Open(context.Background(), conn, db.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer dbh.Close()
			m, err := migrations.NewMigrator(dbh)
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				applied[i], errs[i] = m.Migrate(context.Background(), nil)
			}()
		}
		close(start)
		wg.Wait()
		appliedBy := 0
		for i := range runs {
			var locked *migrations.LockedError
			switch {
			case errs[i] == nil && len(applied[i]) > 0:
				appliedBy++
			case errs[i] == nil, errors.As(errs[i], &locked):
			default:
				t.Errorf("run %d: %v", i, errs[i])
			}
		}
		if appliedBy != 1 {
			t.Errorf("%d runs applied migrations, want exactly 1 (errors %v)", appliedBy, errs)
		}
	})
}
