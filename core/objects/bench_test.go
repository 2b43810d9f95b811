package objects

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rivetmetal/rivet/core/version"
)

// Hot paths of the versioned core on the Node sample (samples_test.go):
// every RPC with a node converts it, and every row read or written goes
// through FromDB/ForDB. Run with
//
//	go test -run '^$' -bench . -benchmem ./core/objects
//
// Each iteration does the whole operation on a fresh input; nothing is
// computed once outside the loop.

func benchRegistry(b *testing.B) *Registry {
	b.Helper()
	r := NewRegistry()
	if err := Install(r); err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkNodeSerialize is sending a node: convert a copy from latest to
// the target and build the primitive (latest, and Node 1.0 for a peer
// pinned to release 0.1, which drops the interface fields).
func BenchmarkNodeSerialize(b *testing.B) {
	benchPerTarget(b, func(r *Registry, n Object, v version.Version) error {
		_, err := r.Serialize(n, v)
		return err
	})
}

// BenchmarkNodeEncode is Serialize plus the JSON encoding of the primitive.
func BenchmarkNodeEncode(b *testing.B) {
	benchPerTarget(b, func(r *Registry, n Object, v version.Version) error {
		_, err := r.Encode(n, v)
		return err
	})
}

// BenchmarkNodeDecode is receiving a node: parse the JSON primitive, build
// the object and convert it to latest on the server side (the golden
// primitives of HEAD, Node 1.1, and of release 0.1, Node 1.0).
func BenchmarkNodeDecode(b *testing.B) {
	r := benchRegistry(b)
	for _, rel := range []string{"HEAD", "0.1"} {
		raw, err := os.ReadFile(filepath.Join("testdata", rel, "Node.json"))
		if err != nil {
			b.Fatal(err)
		}
		b.Run("from-"+rel, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Decode(raw, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNodeForDB is the conversion before a row is written: a copy at
// the target with the fields to write (latest, and Node 1.0 for a
// service pinned to release 0.1).
func BenchmarkNodeForDB(b *testing.B) {
	benchPerTarget(b, func(r *Registry, n Object, v version.Version) error {
		_, _, err := r.ForDB(n, v)
		return err
	})
}

// benchPerTarget runs op on the Node sample at each of targets.
func benchPerTarget(b *testing.B, op func(r *Registry, n Object, v version.Version) error) {
	r := benchRegistry(b)
	node := loadedSample(r, "Node")
	for _, tc := range targets(mustLatest(b, r)) {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := op(r, node, tc.v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type benchTarget struct {
	name string
	v    version.Version
}

// targets are latest and Node 1.0, what a peer pinned to release 0.1 gets.
func targets(latest version.Version) []benchTarget {
	return []benchTarget{{"latest", latest}, {"backport-1.0", version.MustParse("1.0")}}
}

func mustLatest(b *testing.B, r *Registry) version.Version {
	b.Helper()
	v, err := r.Latest("Node")
	if err != nil {
		b.Fatal(err)
	}
	return v
}

// BenchmarkParsePrimitive is reading the JSON of a node primitive, as
// both sides of an RPC do, against the json.Unmarshal it replaced ("std",
// wire_fast_test.go): the golden Node of HEAD, compacted as it travels.
// Run with
//
//	go test -run '^$' -bench ParsePrimitive -benchmem ./core/objects
func BenchmarkParsePrimitive(b *testing.B) {
	prim, err := os.ReadFile(filepath.Join("testdata", "HEAD", "Node.json"))
	if err != nil {
		b.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, prim); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		fn   func([]byte) (Primitive, error)
	}{
		{"fast", ParsePrimitive},
		{"std", parsePrimitiveStd},
		// What Decode reads (names from the registry).
		{"registry", func(b []byte) (Primitive, error) { return parsePrimitive(b, parseRegistry) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.fn(compact.Bytes()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNodeCreate is the versioned core's share of enrolling one node
// (POST /v1/nodes), the shape the objects take there: a node built by New
// with a driver, a name, a UUID and a provision state, so every field is
// a change and most hold their defaults. "api" builds it, encodes it for
// create_node and decodes the reply; "conductor" decodes the argument,
// converts a copy for the row (ForInsert, as the DB layer does for a
// create), takes the snapshot after the write and
// encodes the reply. Run with
//
//	go test -run '^$' -bench NodeCreate -benchmem ./core/objects
func BenchmarkNodeCreate(b *testing.B) {
	r := benchRegistry(b)
	latest := mustLatest(b, r)
	newNode := func() Object {
		obj, err := r.New("Node")
		if err != nil {
			b.Fatal(err)
		}
		n := obj.(*Node)
		name := "node-0042"
		n.Driver, n.Name, n.UUID, n.ProvisionState = "fake-hardware", &name, "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "enroll"
		return n
	}
	arg, err := r.Encode(newNode(), latest)
	if err != nil {
		b.Fatal(err)
	}
	stored, err := r.Decode(arg, true)
	if err != nil {
		b.Fatal(err)
	}
	if err := r.ResetChanges(stored); err != nil {
		b.Fatal(err)
	}
	reply, err := r.Encode(stored, latest)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("api", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Encode(newNode(), latest); err != nil {
				b.Fatal(err)
			}
			if _, err := r.Decode(reply, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("conductor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			obj, err := r.Decode(arg, true)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.ForInsert(obj, latest); err != nil {
				b.Fatal(err)
			}
			if err := r.ResetChanges(obj); err != nil {
				b.Fatal(err)
			}
			if _, err := r.Encode(obj, latest); err != nil {
				b.Fatal(err)
			}
		}
	})
}
