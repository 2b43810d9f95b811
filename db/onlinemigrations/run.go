package onlinemigrations

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
)

// BatchSize is the per-pass budget when no --max-count is given.
// ironic-dbsync passes 50, which suits its per-object migrations; Rivet's
// migrations change rows in chunks of ChunkSize (one short transaction
// each) whatever the budget, and each pass begins with a count of what is
// left (a scan of the table), so small passes only multiply those scans:
// 1,000,000 rows in passes of 50 are 20,000 scans, in passes of 100,000
// eleven. A pass still reports progress every few seconds.
const BatchSize = 100000

// Runner runs a registry's migrations against one database.
type Runner struct {
	DB       *db.DB
	Registry *Registry
	// Report receives progress; nil prints nothing.
	Report Reporter
	// BatchSize is the budget of each pass when Run is given no maxCount;
	// 0 means the package's BatchSize.
	BatchSize int
	// ServiceTimeout is how recent a heartbeat must be for a service to
	// count as live; 0 means db.DefaultServiceTimeout.
	ServiceTimeout time.Duration
	// ForgetTimeout is how long a service that is not live still counts
	// for the gate ([DEFAULT] service_forget_timeout); 0 means
	// db.DefaultServiceForgetTimeout.
	ForgetTimeout time.Duration
	// Table parses the services' pins for the gate; nil means
	// release.Default().
	Table *release.Table
	// Notes receives what the gate did besides checking (the finalized
	// release advancing); nil discards.
	Notes io.Writer
}

// MigrationError is a migration that failed. Its message is ironic-dbsync's.
type MigrationError struct {
	Name string
	Err  error
}

// Error gives ironic-dbsync's "Error while running <name>: <err>."
func (e *MigrationError) Error() string {
	return fmt.Sprintf("Error while running %s: %v.", e.Name, e.Err)
}

// Unwrap returns the migration's error.
func (e *MigrationError) Unwrap() error { return e.Err }

// Run runs the migrations. With maxCount > 0 it makes one pass migrating at
// most maxCount objects in all; with maxCount 0 it runs passes of
// r.BatchSize until one migrates fewer. finished is false when the budget ran out, in
// which case more may remain (there is no look-ahead, as in Ironic) and the
// caller should re-run. options come from ParseOptions.
func (r *Runner) Run(ctx context.Context, maxCount int, options map[string]map[string]string) (finished bool, err error) {
	if maxCount < 0 {
		return false, badArgument(`"max-count" must be a positive value.`)
	}
	ms := r.Registry.Migrations()
	gate := Gate{DB: r.DB, Table: r.Table, Liveness: db.Liveness{Timeout: r.ServiceTimeout, Forget: r.ForgetTimeout}, Notes: r.Notes}
	if err := gate.Open(ctx, ms); err != nil {
		return false, err
	}
	report := r.Report
	if report == nil {
		report = nopReporter{}
	}
	defer report.Finish()
	if maxCount > 0 {
		return r.pass(ctx, ms, maxCount, options, report)
	}
	batch := r.BatchSize
	if batch <= 0 {
		batch = BatchSize
	}
	report.Batches(batch)
	for !finished {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if finished, err = r.pass(ctx, ms, batch, options, report); err != nil {
			return false, err
		}
	}
	return true, nil
}

// pass is ironic-dbsync's _run_migration_functions: each migration gets what
// is left of the budget; reaching the budget ends the pass unfinished.
func (r *Runner) pass(ctx context.Context, ms []Migration, budget int, options map[string]map[string]string, report Reporter) (bool, error) {
	migratedSoFar := 0
	for _, m := range ms {
		left := budget - migratedSoFar
		total, migrated, err := m.Run(ctx, r.DB, left, options[m.Name])
		if err == nil && (migrated < 0 || total < 0 || migrated > left) {
			err = fmt.Errorf("reported %d of %d migrated with a budget of %d", migrated, total, left)
		}
		if err != nil {
			return false, &MigrationError{Name: m.Name, Err: err}
		}
		report.Migrated(m.Name, migrated, total)
		migratedSoFar += migrated
		if migratedSoFar >= budget {
			return false, nil
		}
	}
	return true, nil
}
