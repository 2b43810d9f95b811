package htpasswd

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
)

// Role is what a user may do within its scope, as Keystone's default
// roles: each implies the ones below it (admin ⊃ member ⊃ reader).
type Role int

// The roles, weakest first.
const (
	Reader Role = iota + 1
	Member
	Admin
)

// String is the role's name in a projects file.
func (r Role) String() string {
	switch r {
	case Reader:
		return "reader"
	case Member:
		return "member"
	case Admin:
		return "admin"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// SystemScope is the project field that gives a user the system scope:
// every node, as an unlisted user has.
const SystemScope = "*"

// Scope is where a user acts: the system (every node) or one project
// (the nodes whose owner or lessee it is), with a role.
type Scope struct {
	// Project is the project's id; "" is the system scope.
	Project string
	Role    Role
}

// System reports whether the scope is the whole system.
func (s Scope) System() bool { return s.Project == "" }

// Projects is a loaded projects file ([api] http_basic_projects_file):
// "user:project:role" lines, project being a project id or "*" for the
// system scope, role admin, member or reader; blank lines and # comments
// are skipped. A user the file does not list has the system scope as
// admin: what every http_basic user has without the file. It is safe for
// concurrent use.
type Projects struct {
	path string

	mu     sync.RWMutex
	scopes map[string]Scope
}

// LoadProjects reads path.
func LoadProjects(path string) (*Projects, error) {
	p := &Projects{path: path}
	if err := p.Reload(); err != nil {
		return nil, err
	}
	return p, nil
}

// Reload re-reads the file; on error the previous scopes stay in force.
func (p *Projects) Reload() error {
	data, err := os.ReadFile(p.path)
	if err != nil {
		return fmt.Errorf("projects file %s: %w", p.path, err)
	}
	scopes, err := ParseProjects(data)
	if err != nil {
		return fmt.Errorf("projects file %s: %w", p.path, err)
	}
	p.mu.Lock()
	p.scopes = scopes
	p.mu.Unlock()
	return nil
}

// Len is the number of users listed.
func (p *Projects) Len() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.scopes)
}

// Scope returns the user's scope; false for a user the file does not
// list (a system admin).
func (p *Projects) Scope(user string) (Scope, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	s, ok := p.scopes[user]
	return s, ok
}

// ParseProjects reads projects file content. A user listed twice, an
// unknown role or a malformed line is an error naming the line.
func ParseProjects(data []byte) (map[string]Scope, error) {
	out := map[string]Scope{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, ":")
		if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
			return nil, fmt.Errorf("line %d: want user:project:role (project %q for the system scope)", n, SystemScope)
		}
		user, project, roleName := parts[0], parts[1], parts[2]
		var role Role
		for _, r := range []Role{Reader, Member, Admin} {
			if roleName == r.String() {
				role = r
			}
		}
		if role == 0 {
			return nil, fmt.Errorf("line %d: user %q: unknown role %q (admin, member or reader)", n, user, roleName)
		}
		if len(project) > 255 {
			return nil, fmt.Errorf("line %d: user %q: project longer than 255 characters", n, user)
		}
		if _, dup := out[user]; dup {
			return nil, fmt.Errorf("line %d: user %q listed twice", n, user)
		}
		if project == SystemScope {
			project = ""
		}
		out[user] = Scope{Project: project, Role: role}
	}
	return out, sc.Err()
}
