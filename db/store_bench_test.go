package db_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// BenchmarkStoreCreate is enrolment's write: nodes created one Create (one
// commit) each, and CreateMany's group commit of 8 and 32 nodes (one
// multi-row INSERT, one SELECT of the ids, one commit). One op is one
// node, so the figures compare directly. Run with
//
//	RIVET_TEST_POSTGRES_DSN='postgresql://postgres@127.0.0.1:5432/postgres?sslmode=disable' \
//	  go test -run '^$' -bench StoreCreate -benchmem ./db
func BenchmarkStoreCreate(b *testing.B) {
	benchDialects(b, func(b *testing.B, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(b, d)
		reg := dbtest.Registry(b)
		s := db.NewStore(dbh, reg, release.NewPinner(dbtest.Releases(b), release.Pin{Mode: release.PinLatest}))
		seq := 0
		node := func() objects.Object {
			obj, _ := reg.New("Node")
			n := obj.(*objects.Node)
			seq++
			n.UUID, n.Name, n.Driver, n.ProvisionState = benchUUID(seq), ptrTo(fmt.Sprintf("bench-%d", seq)), "fake-hardware", "enroll"
			return n
		}
		// one-by-one is Create (bun's INSERT); together-N is CreateMany of
		// N nodes, the conductor's group commit (on PostgreSQL the typed
		// pipelined insert, also for N = 1).
		for _, batch := range []int{0, 1, 8, 32} {
			name := "one-by-one"
			if batch > 0 {
				name = fmt.Sprintf("together-%d", batch)
			}
			viaCreate := batch == 0
			batch = max(batch, 1)
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				objs := make([]objects.Object, 0, batch)
				flush := func() {
					if viaCreate {
						if err := s.Create(ctx, objs[0]); err != nil {
							b.Fatal(err)
						}
					} else {
						for _, err := range s.CreateMany(ctx, objs) {
							if err != nil {
								b.Fatal(err)
							}
						}
					}
					objs = objs[:0]
				}
				for b.Loop() {
					objs = append(objs, node())
					if len(objs) == batch {
						flush()
					}
				}
				if len(objs) > 0 {
					flush()
				}
			})
		}
	})
}

func ptrTo[T any](v T) *T { return &v }

// BenchmarkStoreGetNode is GetNode of one node by UUID, the typed statement
// and scanner GetNode uses against bun's query builder and reflective scan
// (its fallback). Run with
//
//	RIVET_TEST_POSTGRES_DSN='postgresql://postgres@127.0.0.1:5432/postgres?sslmode=disable' \
//	  go test -run '^$' -bench StoreGetNode -benchmem ./db
func BenchmarkStoreGetNode(b *testing.B) {
	benchDialects(b, func(b *testing.B, d db.Dialect) {
		ctx := context.Background()
		reg := dbtest.Registry(b)
		s := db.NewStore(dbtest.Open(b, d), reg, release.NewPinner(dbtest.Releases(b), release.Pin{}))
		obj, _ := reg.New("Node")
		n := obj.(*objects.Node)
		n.UUID, n.Name, n.Driver, n.ProvisionState = benchUUID(1), ptrTo("bench-1"), "fake-hardware", "active"
		n.DriverInfo = map[string]any{"ipmi_address": "10.0.0.7", "ipmi_username": "admin", "ipmi_password": "secret"}
		n.Properties = map[string]any{"cpu_arch": "x86_64", "cpus": 32, "memory_mb": 131072, "local_gb": 400}
		if err := s.Create(ctx, n); err != nil {
			b.Fatal(err)
		}
		for _, path := range []string{"typed", "bun"} {
			b.Run(path, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					var err error
					if path == "typed" {
						_, err = s.GetNode(ctx, n.UUID)
					} else {
						_, err = s.GetNodeBun(ctx, "uuid", n.UUID)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	})
}
