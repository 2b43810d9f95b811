package onlinemigrations

import (
	"io"
	"time"

	"github.com/rivetmetal/rivet/db"
)

// Options configure the db layer's online migrations.
type Options struct {
	// LiveTimeout is how recent a conductor's heartbeat must be for its
	// catalog to win over older registrations; 0 means
	// db.DefaultServiceTimeout.
	LiveTimeout time.Duration
	// Notes receives what a migration could not do and why (nil discards):
	// it goes beside the progress lines, never instead of an error.
	Notes io.Writer
	// ChunkSize is how many rows one UPDATE changes; 0 means the
	// package's ChunkSize.
	ChunkSize int
	// Workers is how many of those UPDATEs run at once; 0 means
	// DefaultWorkers for the database's dialect. The --option
	// backfill_node_interfaces.workers=N overrides it for one run.
	Workers int
}

// DefaultWorkers is how many chunk UPDATEs a migration runs at once by
// default: two on PostgreSQL and MySQL/MariaDB, whose servers write
// disjoint rows in parallel (1,000,000 node rows on a 2-core machine:
// see docs/performance.md), one on SQLite, which has one writer at a time.
func DefaultWorkers(d db.Dialect) int {
	if d == db.SQLite {
		return 1
	}
	return 2
}

// Install registers the online migrations the db layer owns, in order; the
// objects layer's update_to_latest_versions goes after them.
func Install(r *Registry, o Options) error {
	return r.Register(BackfillNodeInterfaces(o))
}
