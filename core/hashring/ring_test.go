package hashring

import (
	"errors"
	"fmt"
	"testing"
)

// The expected owners were computed with an independent Python
// implementation of tooz's HashRing (hashlib.md5, incremental update per
// partition, bisect_right lookup), so these tests pin Ironic's placement.
func TestPlacementMatchesTooz(t *testing.T) {
	tests := map[string]struct {
		hosts []string
		want  map[string]string
	}{
		"three conductors": {
			hosts: []string{"cond-a", "cond-b", "cond-c"},
			want: map[string]string{
				"1be26c0b-03f2-4d2e-ae87-c02d7f33c123": "cond-c",
				"fa4cd7bd-0e9a-4a5e-8d4c-9e6a4f0b1c2d": "cond-b",
				"00000000-0000-0000-0000-000000000000": "cond-a",
				"ffffffff-ffff-ffff-ffff-ffffffffffff": "cond-c",
				"node-0":                               "cond-b", "node-1": "cond-a", "node-2": "cond-b",
				"node-3": "cond-c", "node-4": "cond-a", "node-5": "cond-b",
			},
		},
		"cond-c left": {
			hosts: []string{"cond-b", "cond-a"}, // order does not matter
			want: map[string]string{
				"1be26c0b-03f2-4d2e-ae87-c02d7f33c123": "cond-b",
				"fa4cd7bd-0e9a-4a5e-8d4c-9e6a4f0b1c2d": "cond-b",
				"00000000-0000-0000-0000-000000000000": "cond-a",
				"ffffffff-ffff-ffff-ffff-ffffffffffff": "cond-b",
				"node-0":                               "cond-b", "node-1": "cond-a", "node-2": "cond-b",
				"node-3": "cond-b", "node-4": "cond-a", "node-5": "cond-b",
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := New(tc.hosts, DefaultPartitionExponent)
			if err != nil {
				t.Fatal(err)
			}
			for key, want := range tc.want {
				got, err := r.Get([]byte(key))
				if err != nil || got != want {
					t.Errorf("Get(%s) = %q, %v; want %q", key, got, err, want)
				}
			}
		})
	}
}

// Removing a host only moves the keys that host owned.
func TestMinimalMovement(t *testing.T) {
	full, _ := New([]string{"a", "b", "c", "d"}, DefaultPartitionExponent)
	less, _ := New([]string{"a", "b", "c"}, DefaultPartitionExponent)
	moved, owned := 0, map[string]int{}
	for i := range 4000 {
		k := []byte(fmt.Sprintf("node-%d", i))
		before, _ := full.Get(k)
		after, _ := less.Get(k)
		owned[before]++
		if before != after {
			if before != "d" {
				t.Fatalf("%s moved from %s to %s although %s stayed", k, before, after, before)
			}
			moved++
		}
	}
	if moved != owned["d"] {
		t.Fatalf("moved %d keys, d owned %d", moved, owned["d"])
	}
	for h, n := range owned {
		if n < 4000/4/3 {
			t.Errorf("host %s owns only %d of 4000 keys: ring badly unbalanced", h, n)
		}
	}
}

func TestEdges(t *testing.T) {
	empty, _ := New(nil, 5)
	if _, err := empty.Get([]byte("x")); !errors.Is(err, ErrEmpty) {
		t.Fatalf("empty ring: %v", err)
	}
	one, _ := New([]string{"h1", "h1"}, 0)
	if got, _ := one.Get([]byte("x")); got != "h1" || len(one.Hosts()) != 1 {
		t.Fatalf("single host ring: %q %v", got, one.Hosts())
	}
	if _, err := New([]string{"a"}, 17); err == nil {
		t.Fatal("exponent 17 accepted")
	}
}

// BenchmarkGet is the conductor lookup of every node-bound API call and
// RPC: the ring of 3, 10 and 100 conductors at the default partition
// exponent, over 1,024 different node uuids. Run with
//
//	go test -run '^$' -bench Get -benchmem ./core/hashring
func BenchmarkGet(b *testing.B) {
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("%08x-03f2-4d2e-ae87-c02d7f33c%03x", i*2654435761, i))
	}
	for _, n := range []int{3, 10, 100} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			hosts := make([]string, n)
			for i := range hosts {
				hosts[i] = fmt.Sprintf("conductor-%d", i)
			}
			r, err := New(hosts, DefaultPartitionExponent)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := r.Get(keys[i%len(keys)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
