package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/htpasswd"
	"golang.org/x/crypto/bcrypt"
)

// TestHtpasswdSetsUsers: rivet htpasswd adds users and replaces a
// password, keeps comments and other users, and writes a file Rivet's
// http_basic loads, mode 0600.
func TestHtpasswdSetsUsers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "htpasswd")
	if err := os.WriteFile(path, []byte("# users\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, u := range []struct{ user, password string }{{"admin", "one"}, {"rpc", "two"}, {"admin", "three"}} {
		hash, err := bcryptHash(u.password)
		if err != nil {
			t.Fatal(err)
		}
		if err := setHtpasswdUser(path, u.user, hash); err != nil {
			t.Fatal(err)
		}
	}
	f, err := htpasswd.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Len() != 2 || !f.Check("admin", "three") || f.Check("admin", "one") || !f.Check("rpc", "two") {
		t.Fatalf("users: %d, admin/three %v, rpc/two %v", f.Len(), f.Check("admin", "three"), f.Check("rpc", "two"))
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), "# users\n") {
		t.Errorf("comment lost:\n%s", data)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	if code, _, errOut := runCLI(t, "htpasswd", path); code != 2 || !strings.Contains(errOut, "give FILE and USER") {
		t.Errorf("one argument: exit %d: %s", code, errOut)
	}
}

// bcryptHash hashes password at the lowest cost.
func bcryptHash(password string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	return string(h), err
}
