package objects

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden wire fixtures in testdata/HEAD")

// marshalFixture is the fixture form of a primitive: indented JSON with a
// final newline, keys sorted by encoding/json.
func marshalFixture(p Primitive) ([]byte, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	return append(b, '\n'), err
}

// TestGoldenHEAD checks that each real kind's sample serialized at its
// latest version is byte for byte testdata/HEAD/<Kind>.json. After a
// deliberate change (a version bump), regenerate with
//
//	go test ./core/objects -run TestGoldenHEAD -update
//
// Cutting a release copies testdata/HEAD to testdata/<release>/.
func TestGoldenHEAD(t *testing.T) {
	r := NewRegistry()
	if err := Install(r); err != nil {
		t.Fatal(err)
	}
	for _, kind := range r.Kinds() {
		t.Run(kind, func(t *testing.T) {
			if _, ok := samples()[kind]; !ok {
				t.Fatalf("no sample for kind %s: add one to samples_test.go", kind)
			}
			latest, _ := r.Latest(kind)
			p, err := r.Serialize(loadedSample(r, kind), latest)
			if err != nil {
				t.Fatal(err)
			}
			got, err := marshalFixture(p)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "HEAD", kind+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(want, got) {
				t.Errorf("%s differs from the serialized sample; if the change is deliberate, run with -update (-file +serialized):\n%s",
					path, cmp.Diff(string(want), string(got)))
			}
		})
	}
}

// TestGoldenFixturesDecode decodes every fixture of every release under
// testdata/*/ (HEAD and each cut release): this code must read what any
// supported release sends. HEAD's fixtures must decode to the samples.
func TestGoldenFixturesDecode(t *testing.T) {
	r := NewRegistry()
	if err := Install(r); err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob(filepath.Join("testdata", "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no fixtures under testdata/*/")
	}
	for _, path := range paths {
		rel, kind := filepath.Base(filepath.Dir(path)), strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(rel+"/"+kind, func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, server := range []bool{true, false} {
				obj, err := r.Decode(b, server)
				if err != nil {
					t.Fatalf("server=%v: %v", server, err)
				}
				if obj.Kind() != kind {
					t.Fatalf("%s holds a %s", path, obj.Kind())
				}
				if rel == "HEAD" {
					if diff := cmp.Diff(values(t, r, samples()[kind]()), values(t, r, obj)); diff != "" {
						t.Errorf("server=%v: decoded fixture differs from the sample (-sample +decoded):\n%s", server, diff)
					}
				}
			}
		})
	}
}
