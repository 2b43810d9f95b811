package conductor

import (
	"context"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/db/migrations"
)

// Background work waits for a busy database instead of dropping its
// save: while another connection holds SQLite's write lock (longer than
// the busy timeout, here 50 ms) the deploy's final save fails with
// SQLITE_BUSY and is retried; once the lock is gone the node is active.
// Before, the save was dropped and the node stayed in "deploying" with no
// lease, for ever.
func TestBackgroundSaveWaitsForBusyDatabase(t *testing.T) {
	ctx := context.Background()
	conn := dbtest.Connection(t, db.SQLite)
	dbh, err := db.Open(ctx, conn, db.Options{SQLiteBusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dbh.Close() })
	m, err := migrations.NewMigrator(dbh)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(ctx, nil); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, dbh, "cond-a", nil)
	n := h.available("node-1")
	gate := make(chan struct{})
	h.hw.set(func(hw *hookedFake) { hw.gate = gate })
	if err := h.api.DoNodeDeploy(ctx, n, false, nil); err != nil {
		t.Fatal(err)
	}
	other, err := db.Open(ctx, conn, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	lock, err := other.Bun().DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	close(gate) // the deploy finishes and saves while the lock is held
	time.Sleep(500 * time.Millisecond)
	if _, err := lock.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	lock.Close()
	if got := h.waitState(n.UUID, "active"); got.LastError != nil {
		t.Errorf("last_error %v", deref(got.LastError))
	}
}
