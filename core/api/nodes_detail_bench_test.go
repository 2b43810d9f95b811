package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rivetmetal/rivet/db"
)

// BenchmarkNodeDetail is GET /v1/nodes/detail?limit=100 over 1,000 nodes
// with every kind of field filled and three traits each, through the
// whole handler (the query, the nodes, their traits, the JSON), at the
// microversion of a client that sends none (1.1), the bench suite's (1.26)
// and the latest. Besides wall time it reports the process's CPU time
// per page (cpu-ns/op), which a busy machine does not inflate. SQLite
// always; PostgreSQL too when RIVET_TEST_POSTGRES_DSN is set:
//
//	go test -run '^$' -bench NodeDetail -benchmem ./core/api
func BenchmarkNodeDetail(b *testing.B) {
	for _, d := range []db.Dialect{db.SQLite, db.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			store, reg, pinner := benchStore(b, d)
			ctx := context.Background()
			for i := range 1000 {
				n := benchNode(reg, "fake-hardware")
				n.UUID = fmt.Sprintf("1be26c0b-03f2-4d2e-ae87-%012x", i)
				name := fmt.Sprintf("rack%d-node%d", i/40, i%40)
				n.Name = &name
				n.Extra = map[string]any{"rack": "r1", "slot": i}
				if err := store.Create(ctx, n); err != nil {
					b.Fatal(err)
				}
				if err := store.SetNodeTraits(ctx, n.ID, []string{"CUSTOM_GPU", "CUSTOM_RACK_R1", "HW_CPU_X86_AVX2"}); err != nil {
					b.Fatal(err)
				}
			}
			h, err := New(Deps{Store: store, Conductor: newFakeConductor(store), Pinner: pinner, MaxLimit: 1000})
			if err != nil {
				b.Fatal(err)
			}
			for _, ver := range []string{"1.1", "1.26", "latest"} {
				b.Run(ver, func(b *testing.B) {
					r := httptest.NewRequest(http.MethodGet, "/v1/nodes/detail?limit=100", nil)
					r.Header.Set(HeaderVersion, ver)
					cpu0, ok0 := processCPU()
					serveLoop(b, h, r)
					if cpu1, ok1 := processCPU(); ok0 && ok1 {
						b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
					}
				})
			}
		})
	}
}
