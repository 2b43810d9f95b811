// Package fuzzcorpus reads the inputs of committed or cached Go fuzz
// corpora, so differential tests can replay what the fuzzers found
// interesting as table cases.
package fuzzcorpus

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Bytes returns the []byte values of the `go test fuzz v1` files in dir
// (none when dir does not exist).
func Bytes(tb testing.TB, dir string) [][]byte {
	tb.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*"))
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if q, ok := strings.CutPrefix(line, "[]byte("); ok && strings.HasSuffix(q, ")") {
				if s, err := strconv.Unquote(strings.TrimSuffix(q, ")")); err == nil {
					out = append(out, []byte(s))
				}
			}
		}
	}
	return out
}
