package htpasswd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseProjects(t *testing.T) {
	got, err := ParseProjects([]byte("# who acts where\n\nalice:p1:admin\nbob:p1:member\n  carol:p2:reader  \nauditor:*:reader\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Scope{"alice": {"p1", Admin}, "bob": {"p1", Member}, "carol": {"p2", Reader}, "auditor": {"", Reader}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, tc := range []struct{ in, err string }{
		{"alice:p1", "line 1: want user:project:role"},
		{"alice::admin", "line 1: want user:project:role"},
		{"\nalice:p1:owner", `line 2: user "alice": unknown role "owner"`},
		{"alice:p1:admin\nalice:p2:reader", `line 2: user "alice" listed twice`},
		{"alice:" + strings.Repeat("p", 256) + ":admin", "longer than 255"},
	} {
		if _, err := ParseProjects([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
		}
	}
}

func TestProjectsReloadKeepsOldOnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "projects")
	if err := os.WriteFile(path, []byte("alice:p1:admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := LoadProjects(path)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := p.Scope("alice"); !ok || s != (Scope{"p1", Admin}) {
		t.Fatalf("alice: %v %v", s, ok)
	}
	if _, ok := p.Scope("root"); ok {
		t.Fatal("an unlisted user has a scope")
	}
	if err := os.WriteFile(path, []byte("alice:p1:boss\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.Reload(); err == nil {
		t.Fatal("a bad file reloaded")
	}
	if s, _ := p.Scope("alice"); s != (Scope{"p1", Admin}) || p.Len() != 1 {
		t.Fatalf("after a failed reload: %v, %d users", s, p.Len())
	}
}
