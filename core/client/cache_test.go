package client

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/version"
)

func TestFileCache(t *testing.T) {
	const ep = "http://h:6385/v1"
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	cases := map[string]struct {
		prepare func(path string)
		advance time.Duration
		want    string // "" for a miss
	}{
		"fresh hit":      {prepare: func(p string) { NewFileCache(p, time.Minute, clock).Store(ep, version.New(1, 10)) }, want: "1.10"},
		"expired":        {prepare: func(p string) { NewFileCache(p, time.Minute, clock).Store(ep, version.New(1, 10)) }, advance: 2 * time.Minute},
		"other endpoint": {prepare: func(p string) { NewFileCache(p, time.Minute, clock).Store("http://x/v1", version.New(1, 10)) }},
		"missing file":   {prepare: func(string) {}},
		"corrupt file": {prepare: func(p string) {
			_ = os.MkdirAll(filepath.Dir(p), 0o700)
			_ = os.WriteFile(p, []byte("{not json"), 0o600)
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rivet", "versions.json")
			tc.prepare(path)
			later := func() time.Time { return now.Add(tc.advance) }
			v, ok := NewFileCache(path, time.Minute, later).Load(ep)
			got := ""
			if ok {
				got = v.String()
			}
			if got != tc.want {
				t.Errorf("Load = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFileCacheKeepsOtherEndpoints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "versions.json")
	c := NewFileCache(path, 0, nil)
	c.Store("http://a/v1", version.New(1, 5))
	c.Store("http://b/v1", version.New(1, 9))
	for ep, want := range map[string]string{"http://a/v1": "1.5", "http://b/v1": "1.9"} {
		if v, ok := c.Load(ep); !ok || v.String() != want {
			t.Errorf("Load(%s) = %v %v, want %s", ep, v, ok, want)
		}
	}
}
