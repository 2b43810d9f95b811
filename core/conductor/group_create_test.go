package conductor

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// Concurrent create_node calls that queue behind busy writers go out in one
// group commit; a duplicate among them gets the error it gets alone
// (DuplicateName, NodeAlreadyExists, 409) and costs the others nothing.
func TestCreateNodeGroupCommit(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		h := newHarness(t, dbtest.Open(t, d), "cond-a", nil)
		ctx := context.Background()
		taken := h.enroll("taken")

		str := func(s string) *string { return &s }
		nodes := []*objects.Node{
			{Driver: fake.HardwareType, Name: str("n-0")},
			{Driver: fake.HardwareType, Name: str("taken")}, // DuplicateName
			{Driver: fake.HardwareType, Name: str("n-1")},
			{Driver: fake.HardwareType, Name: str("other"), UUID: taken.UUID}, // NodeAlreadyExists
			{Driver: fake.HardwareType, Name: str("twin")},
			{Driver: fake.HardwareType, Name: str("twin")}, // one of the twins is a DuplicateName
			{Driver: fake.HardwareType},
			{Driver: fake.HardwareType, Name: str("n-2"), Extra: map[string]any{"rack": "r1"}},
		}

		// Hold every writer slot so that the calls queue, then let one
		// writer take the whole queue as one batch.
		g := h.svc.creates
		g.mu.Lock()
		g.writers = g.maxWriters
		g.mu.Unlock()
		out := make([]*objects.Node, len(nodes))
		errs := make([]error, len(nodes))
		var wg sync.WaitGroup
		for i, n := range nodes {
			wg.Go(func() { out[i], errs[i] = h.api.CreateNode(ctx, n) })
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			g.mu.Lock()
			queued := len(g.queue)
			g.mu.Unlock()
			if queued == len(nodes) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d creates queued", queued, len(nodes))
			}
			time.Sleep(time.Millisecond)
		}
		g.mu.Lock()
		g.writers-- // give one slot back; write() below runs in the other
		g.mu.Unlock()
		go g.write()
		wg.Wait()

		twins := 0
		for i, n := range nodes {
			class, code := classOf(errs[i])
			switch {
			case i == 1:
				if class != "DuplicateName" || code != http.StatusConflict || errs[i].Error() != "A node with name taken already exists." {
					t.Errorf("duplicate name: %v (%s %d)", errs[i], class, code)
				}
			case i == 3:
				if class != "NodeAlreadyExists" || code != http.StatusConflict || errs[i].Error() != "A node with UUID "+taken.UUID+" already exists." {
					t.Errorf("duplicate UUID: %v (%s %d)", errs[i], class, code)
				}
			case i == 4 || i == 5:
				if errs[i] == nil {
					twins++
				} else if class != "DuplicateName" || code != http.StatusConflict {
					t.Errorf("twin %d: %v (%s %d)", i, errs[i], class, code)
				}
			case errs[i] != nil:
				t.Errorf("node %d: %v", i, errs[i])
			}
			if errs[i] != nil {
				continue
			}
			got := h.node(out[i].UUID)
			if got.ID != out[i].ID || got.ID == 0 || got.ProvisionState != "enroll" || (n.Name != nil && *got.Name != *n.Name) {
				t.Errorf("node %d stored as %+v, returned %+v", i, got, out[i])
			}
		}
		if twins != 1 {
			t.Errorf("%d of the two twins stored", twins)
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.writers != 0 || len(g.queue) != 0 {
			t.Errorf("after the batch: %d writers, %d queued", g.writers, len(g.queue))
		}
	})
}

// BenchmarkCreateNodeConcurrent is create_node at concurrency 8 (the
// enroll workload's) in process, on PostgreSQL when
// RIVET_TEST_POSTGRES_DSN is set, else SQLite: each node written alone
// ("alone", as before the group commit) or grouped with 1 or 2 writers.
// One op is one node. Run with
//
//	RIVET_TEST_POSTGRES_DSN='postgresql://postgres@127.0.0.1:5432/postgres?sslmode=disable' \
//	  go test -run '^$' -bench CreateNodeConcurrent -benchmem ./core/conductor
func BenchmarkCreateNodeConcurrent(b *testing.B) {
	d := db.SQLite
	if os.Getenv("RIVET_TEST_POSTGRES_DSN") != "" {
		d = db.Postgres
	}
	for _, writers := range []int{0, 1, 2} {
		name := fmt.Sprintf("grouped-%d-writers", writers)
		if writers == 0 {
			name = "alone"
		}
		b.Run(name, func(b *testing.B) {
			h := newHarness(b, dbtest.Open(b, d), "cond-a", nil)
			h.svc.creates.maxWriters = writers
			var seq atomic.Int64
			b.SetParallelism(4) // × GOMAXPROCS 2: 8 callers
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					name := fmt.Sprintf("bench-%d", seq.Add(1))
					if _, err := h.api.CreateNode(context.Background(), &objects.Node{Driver: fake.HardwareType, Name: &name}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// A create that collides answers as the API's own check would (core/api
// checkNodeUnique): UUID before name before instance UUID, same classes,
// codes and messages.
func TestCreateNodeDuplicateAnswers(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		h := newHarness(t, dbtest.Open(t, d), "cond-a", nil)
		ctx := context.Background()
		str := func(s string) *string { return &s }
		inst := "5a4a8a0e-64b7-4e0f-9e8c-0a1e0f0e9b11"
		a, err := h.api.CreateNode(ctx, &objects.Node{Driver: fake.HardwareType, Name: str("a"), InstanceUUID: &inst})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			node       *objects.Node
			class, msg string
		}{
			{&objects.Node{Driver: fake.HardwareType, UUID: a.UUID, Name: str("a")}, "NodeAlreadyExists", "A node with UUID " + a.UUID + " already exists."},
			{&objects.Node{Driver: fake.HardwareType, UUID: a.UUID, InstanceUUID: &inst}, "NodeAlreadyExists", "A node with UUID " + a.UUID + " already exists."},
			{&objects.Node{Driver: fake.HardwareType, Name: str("a"), InstanceUUID: &inst}, "DuplicateName", "A node with name a already exists."},
			{&objects.Node{Driver: fake.HardwareType, UUID: "0b7f6f0e-1c55-4d2a-9a55-3c9b1f0a2b10", Name: str("b"), InstanceUUID: &inst}, "InstanceAssociated",
				"Instance " + inst + " is already associated with a node, it cannot be associated with this other node 0b7f6f0e-1c55-4d2a-9a55-3c9b1f0a2b10"},
		} {
			_, err := h.api.CreateNode(ctx, tc.node)
			if class, code := classOf(err); class != tc.class || code != http.StatusConflict || err.Error() != tc.msg {
				t.Errorf("got %v (%s %d), want %s: %s", err, class, code, tc.class, tc.msg)
			}
		}
	})
}
