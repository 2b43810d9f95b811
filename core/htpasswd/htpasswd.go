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
	path  string
	mu    sync.RWMutex
	users map[string][]byte
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
	f.mu.Lock()
	f.users = users
	f.mu.Unlock()
	return nil
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

// dummy is compared against for unknown users so that a miss costs the same
// time as a wrong password.
var dummy, _ = bcrypt.GenerateFromPassword([]byte("rivet-dummy"), bcrypt.MinCost)

// Len is the number of users loaded.
func (f *File) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.users)
}

// Check reports whether user and password match an entry.
func (f *File) Check(user, password string) bool {
	f.mu.RLock()
	hash, ok := f.users[user]
	f.mu.RUnlock()
	if !ok {
		_ = bcrypt.CompareHashAndPassword(dummy, []byte(password))
		return false
	}
	return bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil
}
