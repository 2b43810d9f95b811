package db_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// BenchmarkStoreListNodes is one page of 100 nodes (a detail page's read)
// through ListNodes' typed scan (read-only nodes, every document
// decoded) against bun's reflective scanner, its
// reference. Run with
//
//	RIVET_TEST_POSTGRES_DSN='postgresql://postgres@127.0.0.1:5432/postgres?sslmode=disable' \
//	  go test -run '^$' -bench StoreListNodes -benchmem ./db
func BenchmarkStoreListNodes(b *testing.B) {
	benchDialects(b, func(b *testing.B, d db.Dialect) {
		ctx := context.Background()
		reg := dbtest.Registry(b)
		s := db.NewStore(dbtest.Open(b, d), reg, release.NewPinner(dbtest.Releases(b), release.Pin{}))
		for i := range 100 {
			obj, _ := reg.New("Node")
			n := obj.(*objects.Node)
			n.UUID, n.Name, n.Driver, n.ProvisionState = benchUUID(i+1), ptrTo(fmt.Sprintf("bench-%d", i)), "fake-hardware", "active"
			n.DriverInfo = map[string]any{"ipmi_address": "10.0.0.7", "ipmi_username": "admin", "ipmi_password": "secret"}
			n.Properties = map[string]any{"cpu_arch": "x86_64", "cpus": 32, "memory_mb": 131072, "local_gb": 400}
			n.Extra = map[string]any{"rack": "r1", "slot": i}
			if err := s.Create(ctx, n); err != nil {
				b.Fatal(err)
			}
		}
		page := func(q *bun.SelectQuery) *bun.SelectQuery { return q.Order("id").Limit(100) }
		for _, path := range []string{"typed", "bun"} {
			b.Run(path, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					var (
						n   int
						err error
					)
					if path == "typed" {
						var listed []db.ListedNode
						listed, err = s.ListNodes(ctx, page, nil)
						n = len(listed)
					} else {
						var nodes []*objects.Node
						nodes, err = s.ListNodesBun(ctx, page)
						n = len(nodes)
					}
					if err != nil || n != 100 {
						b.Fatalf("%d nodes, %v", n, err)
					}
				}
			})
		}
	})
}
