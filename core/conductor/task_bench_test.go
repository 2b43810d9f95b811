package conductor

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// BenchmarkTaskAcquireRelease is the lease cycle of every node-changing
// call a conductor runs: TaskManager.Acquire (load the node, take its
// lease, load it again under the lease, start renewing) then
// Task.Release (stop renewing, free the lease), on a table of 100 nodes,
// each iteration on the next node. SQLite always, PostgreSQL when
// RIVET_TEST_POSTGRES_DSN names a server. Run with
//
//	RIVET_TEST_POSTGRES_DSN='postgresql://postgres@127.0.0.1:5432/postgres?sslmode=disable' \
//	  go test -run '^$' -bench TaskAcquireRelease -benchmem ./core/conductor
func BenchmarkTaskAcquireRelease(b *testing.B) {
	for _, d := range []db.Dialect{db.SQLite, db.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			if d == db.Postgres && os.Getenv("RIVET_TEST_POSTGRES_DSN") == "" {
				b.Skip("RIVET_TEST_POSTGRES_DSN is unset: set it to a PostgreSQL server URL to measure leases there")
			}
			ctx := context.Background()
			reg := objects.NewRegistry()
			if err := objects.Install(reg); err != nil {
				b.Fatal(err)
			}
			store := db.NewStore(dbtest.Open(b, d), reg, release.NewPinner(release.Default(), release.Pin{Mode: release.PinLatest}))
			uuids := make([]string, 100)
			for i := range uuids {
				n := &objects.Node{UUID: uuid.NewString(), Driver: "fake-hardware", ProvisionState: "available"}
				if err := store.Create(ctx, n); err != nil {
					b.Fatal(err)
				}
				uuids[i] = n.UUID
			}
			tm := NewTaskManager(store, "cond-a", time.Minute, 0, 0, slog.New(slog.DiscardHandler))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				task, err := tm.Acquire(ctx, uuids[i%len(uuids)], "bench")
				if err != nil {
					b.Fatal(err)
				}
				task.Release(ctx)
				i++
			}
		})
	}
}
