package config

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite configs/rivet.conf.sample and docs/admin/configuration.md")

// TestGenerated fails when the committed sample or reference no longer
// matches the declarations.
func TestGenerated(t *testing.T) {
	tests := map[string]struct {
		path  string
		gen   func(io.Writer) error
		regen string
	}{
		"sample":    {path: "../../configs/rivet.conf.sample", gen: Sample, regen: SampleCommand},
		"reference": {path: "../../docs/admin/configuration.md", gen: Reference, regen: ReferenceCommand},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.gen(&buf); err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.MkdirAll(filepath.Dir(tc.path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(tc.path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			committed, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatalf("%v; generate it with: %s (or go test ./core/config -run TestGenerated -update)", err, tc.regen)
			}
			if diff := cmp.Diff(string(committed), buf.String()); diff != "" {
				t.Fatalf("%s is stale; regenerate it with: %s (or go test ./core/config -run TestGenerated -update)\n(-committed +generated):\n%s",
					tc.path, tc.regen, diff)
			}
		})
	}
}
