package htpasswd

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// File is a loaded htpasswd file. It is safe for concurrent use.
type File struct {
	path string
	// compare checks a password against a bcrypt hash; tests replace it to
	// see which hash every Check compares against.
	compare func(hash, password []byte) error

	mu    sync.RWMutex
	users map[string][]byte
	// dummy is a bcrypt hash of a random password at the highest cost
	// among users: Check compares an unknown user's password against it,
	// so that "no such user" costs the same bcrypt work as "wrong
	// password" and the answer time does not tell which users exist.
	dummy []byte
}

// Load reads path.
func Load(path string) (*File, error) {
	f := &File{path: path}
	if err := f.Reload(); err != nil {
		return nil, err
	}
	return f, nil
}

// Reload re-reads the file; on error the previous users stay in force.
func (f *File) Reload() error {
	data, err := os.ReadFile(f.path)
	if err != nil {
		return fmt.Errorf("htpasswd %s: %w", f.path, err)
	}
	users, err := Parse(data)
	if err != nil {
		return fmt.Errorf("htpasswd %s: %w", f.path, err)
	}
	f.mu.RLock()
	dummy := f.dummy
	f.mu.RUnlock()
	if dummy, err = dummyFor(users, dummy); err != nil {
		return fmt.Errorf("htpasswd %s: %w", f.path, err)
	}
	f.mu.Lock()
	f.users, f.dummy = users, dummy
	f.mu.Unlock()
	return nil
}

// dummyFor returns a bcrypt hash at the highest cost among users (bcrypt's
// default cost when there are none), reusing old when its cost already is
// that one: generating a hash costs as much as checking one.
func dummyFor(users map[string][]byte, old []byte) ([]byte, error) {
	cost := 0
	for _, h := range users {
		if c, err := bcrypt.Cost(h); err == nil && c > cost {
			cost = c
		}
	}
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	if c, err := bcrypt.Cost(old); err == nil && c == cost {
		return old, nil
	}
	// The password is never used to log in: it only has to exist.
	return bcrypt.GenerateFromPassword([]byte("rivet unknown-user dummy"), cost)
}

// Parse reads htpasswd content: "user:hash" lines, blank lines and # comments.
func Parse(data []byte) (map[string][]byte, error) {
	users := map[string][]byte{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		user, hash, ok := strings.Cut(line, ":")
		if !ok || user == "" {
			return nil, fmt.Errorf("line %d: want user:bcrypt-hash", n)
		}
		if !strings.HasPrefix(hash, "$2y$") && !strings.HasPrefix(hash, "$2a$") && !strings.HasPrefix(hash, "$2b$") {
			return nil, fmt.Errorf("line %d: user %q: only bcrypt hashes are supported (htpasswd -B)", n, user)
		}
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			return nil, fmt.Errorf("line %d: user %q: malformed bcrypt hash", n, user)
		}
		users[user] = []byte(hash)
	}
	return users, sc.Err()
}

// Len is the number of users loaded.
func (f *File) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.users)
}

// Check reports whether user and password match an entry. An unknown user
// costs one bcrypt comparison too, at the file's highest cost: with every
// user at the same cost (htpasswd -B writes one), an unknown user and a
// wrong password take the same time.
func (f *File) Check(user, password string) bool {
	f.mu.RLock()
	hash, ok := f.users[user]
	dummy := f.dummy
	f.mu.RUnlock()
	compare := f.compare
	if compare == nil {
		compare = bcrypt.CompareHashAndPassword
	}
	if !ok {
		_ = compare(dummy, []byte(password))
		return false
	}
	return compare(hash, []byte(password)) == nil
}
