package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/rivetmetal/rivet/core/logging"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// Hot paths of the REST API without a network or a database. Run with
//
//	go test -run '^$' -bench . -benchmem ./core/api

// discardWriter is a ResponseWriter that keeps nothing but its headers,
// cleared before each request.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkMicroversionMiddleware is the X-OpenStack-Ironic-API-Version
// negotiation on every request, around a handler that only answers 204:
// header absent (1.1), an explicit version, "latest", and an invalid value
// (406 with Ironic's error body).
func BenchmarkMicroversionMiddleware(b *testing.B) {
	pinner := release.NewPinner(release.Default(), release.Pin{})
	rg := Range{Min: release.MinAPI, Max: func() version.Version { return pinner.Effective().API }}
	h := rg.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if VersionFrom(r.Context()).Major != 1 {
			b.Fatal("no version negotiated")
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	for _, tc := range []struct{ name, header string }{
		{"absent", ""}, {"explicit", "1.31"}, {"latest", "latest"}, {"invalid", "1.x"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, "/v1/nodes/1be26c0b-03f2-4d2e-ae87-c02d7f33c123", nil)
			if tc.header != "" {
				r.Header.Set(HeaderVersion, tc.header)
			}
			serveLoop(b, h, r)
		})
	}
}

// BenchmarkNodeRender is GET /v1/nodes/{uuid}'s body for a loaded node:
// the view at the request's version (secrets masked, newer fields hidden,
// fields the pinned release lacks hidden) and its JSON encoding. The node
// has no chassis, so no database is involved.
func BenchmarkNodeRender(b *testing.B) {
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		b.Fatal(err)
	}
	tb := release.Default()
	pin01, err := tb.ParsePin("0.1")
	if err != nil {
		b.Fatal(err)
	}
	n := benchNode(reg, "ipmi")
	for _, tc := range []struct {
		name    string
		pin     release.Pin
		version string
	}{{"v1.1", release.Pin{}, "1.1"}, {"latest", release.Pin{}, "latest"}, {"pinned-0.1-latest", pin01, "latest"}} {
		b.Run(tc.name, func(b *testing.B) {
			pinner := release.NewPinner(tb, tc.pin)
			s := &server{Deps: Deps{Pinner: pinner}, reg: reg}
			v := version.MustParse("1.1")
			if tc.version == "latest" {
				v = pinner.Effective().API
			}
			r := httptest.NewRequest(http.MethodGet, "/v1/nodes/"+n.UUID, nil)
			r = r.WithContext(WithVersion(context.Background(), v))
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				view, err := s.nodeView(r, n, chassisUUIDs{})
				if err != nil {
					b.Fatal(err)
				}
				writeJSON(w, http.StatusOK, view)
			}
		})
	}
}

// BenchmarkNodeList is GET /v1/nodes?limit=1000 (the non-detail list, 1.31)
// over 1,000 nodes with varied fields, through the whole handler: the
// query, loading the rows and the JSON. "general" loads whole nodes into
// versioned objects and builds each node's view (the path every list took
// before the fast path); "fast" selects and writes the list's columns.
// SQLite always; PostgreSQL too when RIVET_TEST_POSTGRES_DSN is set:
//
//	go test -run '^$' -bench NodeList -benchmem ./core/api
func BenchmarkNodeList(b *testing.B) {
	for _, d := range []db.Dialect{db.SQLite, db.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			store, reg, pinner := benchStore(b, d)
			ctx := context.Background()
			for i := range 1000 {
				obj, _ := reg.New("Node")
				n := obj.(*objects.Node)
				name, power := fmt.Sprintf("rack%d-node%d", i/40, i%40), "power on"
				n.UUID = fmt.Sprintf("1be26c0b-03f2-4d2e-ae87-%012x", i)
				n.Name, n.Driver, n.PowerState, n.ProvisionState = &name, "fake-hardware", &power, "available"
				n.DriverInfo = map[string]any{"ipmi_address": "10.0.0.7", "ipmi_username": "admin", "ipmi_password": "secret"}
				n.Properties = map[string]any{"cpu_arch": "x86_64", "cpus": 32, "memory_mb": 131072, "local_gb": 400}
				n.Extra = map[string]any{"rack": "r1", "slot": i}
				if err := store.Create(ctx, n); err != nil {
					b.Fatal(err)
				}
			}
			for _, slow := range []bool{true, false} {
				name := "fast"
				if slow {
					name = "general"
				}
				b.Run(name, func(b *testing.B) {
					h, err := New(Deps{Store: store, Conductor: newFakeConductor(store), Pinner: pinner, MaxLimit: 1000,
						slowNodeList: slow})
					if err != nil {
						b.Fatal(err)
					}
					r := httptest.NewRequest(http.MethodGet, "/v1/nodes?limit=1000", nil)
					r.Header.Set(HeaderVersion, "1.31")
					serveLoop(b, h, r)
				})
			}
		})
	}
}

// BenchmarkNodeGet is GET /v1/nodes/{uuid} at 1.31, at the latest version
// and without a version header, through the whole handler chain (request
// id, metrics, the access log through the services' masking text handler,
// microversion, the queries, loading the node and its JSON) on SQLite, and
// on PostgreSQL when RIVET_TEST_POSTGRES_DSN is set:
//
//	go test -run '^$' -bench NodeGet -benchmem ./core/api
func BenchmarkNodeGet(b *testing.B) {
	for _, d := range []db.Dialect{db.SQLite, db.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			store, reg, pinner := benchStore(b, d)
			n := benchNode(reg, "fake-hardware")
			if err := store.Create(context.Background(), n); err != nil {
				b.Fatal(err)
			}
			logger, _, err := logging.New(io.Discard, "text", "info")
			if err != nil {
				b.Fatal(err)
			}
			h, err := New(Deps{Store: store, Conductor: newFakeConductor(store), Pinner: pinner, Logger: logger})
			if err != nil {
				b.Fatal(err)
			}
			// 1.31 is the figure of earlier rounds; latest adds traits
			// (a second query), conductor and every newer field; a client
			// that sends no version header gets 1.1.
			for _, v := range []string{"1.31", "latest", "none"} {
				b.Run(v, func(b *testing.B) {
					// A server's request context can be cancelled (the
					// client goes away); httptest's cannot.
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/v1/nodes/"+n.UUID, nil)
					if v != "none" {
						r.Header.Set(HeaderVersion, v)
					}
					serveLoop(b, h, r)
				})
			}
		})
	}
}

// serveLoop serves r with h once per benchmark iteration, discarding the
// response.
func serveLoop(b *testing.B, h http.Handler, r *http.Request) {
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, r)
	}
}

// benchStore opens a fresh database of dialect d (PostgreSQL only when
// RIVET_TEST_POSTGRES_DSN is set, else the benchmark is skipped) and a store
// over it, unpinned.
func benchStore(b *testing.B, d db.Dialect) (*db.Store, *objects.Registry, *release.Pinner) {
	b.Helper()
	if d == db.Postgres && os.Getenv("RIVET_TEST_POSTGRES_DSN") == "" {
		b.Skip("RIVET_TEST_POSTGRES_DSN is not set")
	}
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		b.Fatal(err)
	}
	pinner := release.NewPinner(release.Default(), release.Pin{})
	return db.NewStore(dbtest.Open(b, d), reg, pinner), reg, pinner
}

// benchNode is the node the GET benchmarks render: every kind of field
// filled, a secret in driver_info to mask.
func benchNode(reg *objects.Registry, driver string) *objects.Node {
	obj, _ := reg.New("Node")
	n := obj.(*objects.Node)
	name, power, boot := "rack1-node7", "power on", "ipxe"
	n.UUID, n.Name, n.Driver, n.PowerState, n.ProvisionState = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", &name, driver, &power, "active"
	n.BootInterface = &boot
	n.DriverInfo = map[string]any{"ipmi_address": "10.0.0.7", "ipmi_username": "admin", "ipmi_password": "secret"}
	n.Properties = map[string]any{"cpu_arch": "x86_64", "cpus": 32, "memory_mb": 131072, "local_gb": 400}
	n.InstanceInfo = map[string]any{"image_source": "http://images/ubuntu.qcow2", "root_gb": 40}
	n.Extra = map[string]any{"rack": "r1", "slot": 7}
	return n
}

// BenchmarkNovaNodeList is Nova's periodic read, GET /v1/nodes?fields=…
// with its fields (traits among them, 1.37) over 1,000 nodes with three
// traits each; "no traits" drops traits from the fields, to show what the
// traits cost (one query for the page, not one per node). SQLite:
//
//	go test -run '^$' -bench NovaNodeList -benchmem ./core/api
func BenchmarkNovaNodeList(b *testing.B) {
	store, reg, pinner := benchStore(b, db.SQLite)
	ctx := context.Background()
	for i := range 1000 {
		obj, _ := reg.New("Node")
		n := obj.(*objects.Node)
		n.UUID, n.Driver = fmt.Sprintf("1be26c0b-03f2-4d2e-ae87-%012x", i), "fake-hardware"
		n.Properties = map[string]any{"cpu_arch": "x86_64", "cpus": 32, "memory_mb": 131072, "local_gb": 400}
		if err := store.Create(ctx, n); err != nil {
			b.Fatal(err)
		}
		if err := store.SetNodeTraits(ctx, n.ID, []string{"CUSTOM_GPU", "CUSTOM_RACK_R1", "HW_CPU_X86_AVX2"}); err != nil {
			b.Fatal(err)
		}
	}
	nova := "uuid,power_state,target_power_state,provision_state,target_provision_state,last_error,maintenance," +
		"properties,instance_uuid,resource_class"
	for name, fields := range map[string]string{"traits": nova + ",traits", "no traits": nova} {
		b.Run(name, func(b *testing.B) {
			h, err := New(Deps{Store: store, Conductor: newFakeConductor(store), Pinner: pinner, MaxLimit: 1000,
				testMaxAPI: v1_37})
			if err != nil {
				b.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodGet, "/v1/nodes?limit=1000&fields="+fields, nil)
			r.Header.Set(HeaderVersion, "1.37")
			serveLoop(b, h, r)
		})
	}
}
