package htpasswd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

func hash(t *testing.T, pw string) string {
	h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

func TestCheckAndReload(t *testing.T) {
	p := filepath.Join(t.TempDir(), "htpasswd")
	// Apache's htpasswd -B writes $2y$; bcrypt accepts it.
	y := strings.Replace(hash(t, "s3cret"), "$2a$", "$2y$", 1)
	if err := os.WriteFile(p, []byte("# admins\nalice:"+y+"\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		user, pw string
		want     bool
	}{
		"right":        {"alice", "s3cret", true},
		"wrong pw":     {"alice", "nope", false},
		"unknown user": {"bob", "s3cret", false},
		"empty":        {"", "", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := f.Check(tc.user, tc.pw); got != tc.want {
				t.Fatalf("Check(%q) = %v", tc.user, got)
			}
		})
	}
	if err := os.WriteFile(p, []byte("bob:"+hash(t, "pw2")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	if f.Check("alice", "s3cret") || !f.Check("bob", "pw2") {
		t.Fatal("reload did not replace users")
	}
	if err := os.WriteFile(p, []byte("broken line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.Reload(); err == nil || !f.Check("bob", "pw2") {
		t.Fatalf("bad reload: err=%v, old users kept=%v", err, f.Check("bob", "pw2"))
	}
}

func TestParseRejects(t *testing.T) {
	tests := map[string]string{
		"md5 apr1":   "u:$apr1$abc$def\n",
		"sha":        "u:{SHA}abc=\n",
		"no colon":   "justuser\n",
		"empty user": ":$2y$10$abc\n",
		"bad bcrypt": "u:$2y$xx\n",
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse([]byte(in)); err == nil {
				t.Fatalf("Parse(%q) accepted", in)
			} else if strings.Contains(err.Error(), "$2y$10$abc") {
				t.Fatalf("error leaks the hash: %v", err)
			}
		})
	}
}

// The shipped example must load and hold the password its comment states.
func TestShippedExample(t *testing.T) {
	f, err := Load(filepath.Join("..", "..", "configs", "htpasswd.example"))
	if err != nil {
		t.Fatal(err)
	}
	if !f.Check("admin", "change-me") {
		t.Fatal(`configs/htpasswd.example: admin/change-me does not verify`)
	}
}
