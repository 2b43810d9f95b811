package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
)

// testReleases is a release table with one cut release, 0.1 "anvil", so pins
// can be exercised while the default table has none.
func testReleases(t *testing.T) *release.Table {
	t.Helper()
	v := version.MustParse
	tb, err := release.NewTable(
		release.Entry{Version: release.HeadKey, API: v("1.31"), RPC: v("1.1"),
			Objects: map[string][]version.Version{"Node": {v("1.1"), v("1.0")}}, ServiceVersion: 2},
		release.Entry{Version: "0.1", Name: "anvil", API: v("1.26"), RPC: v("1.0"),
			Objects: map[string][]version.Version{"Node": {v("1.0")}}, ServiceVersion: 1},
	)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// writeConf writes content to name in dir and returns its path.
func writeConf(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// problems returns the text of each problem err joins.
func problems(err error) []string {
	var out []string
	for _, p := range Problems(err) {
		out = append(out, p.Error())
	}
	return out
}

// syncBuffer is a log sink safe for the reloader's goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor polls until cond holds, failing the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// hasLine reports whether some line of logs contains every one of parts.
func hasLine(logs string, parts ...string) bool {
	for line := range strings.SplitSeq(logs, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all && line != "" {
			return true
		}
	}
	return false
}
