package db_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// benchDialects are the databases the lease benchmarks run on: SQLite
// always, PostgreSQL when RIVET_TEST_POSTGRES_DSN names a server.
func benchDialects(b *testing.B, fn func(b *testing.B, d db.Dialect)) {
	for _, d := range []db.Dialect{db.SQLite, db.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			if d == db.Postgres && os.Getenv("RIVET_TEST_POSTGRES_DSN") == "" {
				b.Skip("RIVET_TEST_POSTGRES_DSN is unset: set it to a PostgreSQL server URL to measure leases there")
			}
			fn(b, d)
		})
	}
}

// BenchmarkLeaseAcquireRelease is one node lease taken and freed: the
// conditional UPDATE that takes a free lease (new fencing epoch) and the
// one that frees it, on a table of 1,000 nodes, each iteration on the next
// node. Run with
//
//	RIVET_TEST_POSTGRES_DSN='postgresql://postgres@127.0.0.1:5432/postgres?sslmode=disable' \
//	  go test -run '^$' -bench LeaseAcquireRelease -benchmem ./db
func BenchmarkLeaseAcquireRelease(b *testing.B) {
	benchDialects(b, func(b *testing.B, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(b, d)
		nodes := make([]*db.Node, 1000)
		for i := range nodes {
			nodes[i] = &db.Node{UUID: benchUUID(i), Driver: "fake-hardware"}
		}
		if _, err := dbh.Bun().NewInsert().Model(&nodes).Exec(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			uuid := nodes[i%len(nodes)].UUID
			epoch, err := dbh.AcquireLease(ctx, uuid, "conductor-1", time.Minute)
			if err != nil {
				b.Fatal(err)
			}
			if err := dbh.ReleaseLease(ctx, uuid, "conductor-1", epoch); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

func benchUUID(i int) string {
	const hex = "0123456789abcdef"
	b := []byte("20000000-0000-0000-0000-000000000000")
	for p := len(b) - 1; i > 0; p-- {
		b[p] = hex[i%16]
		i /= 16
	}
	return string(b)
}
