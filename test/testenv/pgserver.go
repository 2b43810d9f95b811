package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
)

// PostgresServer is a private PostgreSQL instance (initdb + pg_ctl) that a
// test may stop and start at will, unlike the shared server RequirePostgres
// creates databases on. It listens on a free loopback port, keeps its data
// in a temporary directory and is stopped and removed when the test ends.
type PostgresServer struct {
	// URL is the connection URL of its "postgres" database, in the form
	// [database] connection takes.
	URL string

	bin, data string
	port      int
	cred      *syscall.Credential // set when running as root: PostgreSQL refuses root
}

// StartPostgresServer initialises and starts a private PostgreSQL from the
// newest /usr/lib/postgresql/*/bin. PostgreSQL refuses to run as root, so
// under root the server runs as the "postgres" user (or "nobody"), set on
// the child process directly (no su). It skips locally (fails under
// CI=true) when the binaries are not installed.
func StartPostgresServer(t testing.TB) *PostgresServer {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		Unavailable(t, "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (apt-get install postgresql)")
	}
	slices.SortFunc(bins, func(a, b string) int { return pgMajor(a) - pgMajor(b) })
	s := &PostgresServer{bin: filepath.Dir(bins[len(bins)-1])}
	dir, err := os.MkdirTemp("", "rivet-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		s.cred = unprivileged(t)
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	s.data = filepath.Join(dir, "data")
	s.port = freeTCPPort(t)
	s.run(t, "initdb", "-D", s.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--locale=C")
	s.Start(t)
	t.Cleanup(func() {
		// Fast: running sessions are cut, as at the end of a test nothing
		// needs them; the data directory goes with dir.
		_ = s.cmd("pg_ctl", "stop", "-D", s.data, "-m", "immediate", "-w").Run()
	})
	s.URL = fmt.Sprintf("postgresql://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
	return s
}

// Start starts the server (again) on its port and waits until it accepts
// connections.
func (s *PostgresServer) Start(t testing.TB) {
	t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off", s.port, s.data)
	s.run(t, "pg_ctl", "start", "-D", s.data, "-l", filepath.Join(s.data, "server.log"), "-o", opts, "-w", "-t", "60")
}

// Stop shuts the server down the way an operator restarting it does
// (pg_ctl stop -m fast: sessions are disconnected, then a clean shutdown)
// and waits until it is down.
func (s *PostgresServer) Stop(t testing.TB) {
	t.Helper()
	s.run(t, "pg_ctl", "stop", "-D", s.data, "-m", "fast", "-w", "-t", "60")
}

// Log returns the server's log, for a failing test to show.
func (s *PostgresServer) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.data, "server.log"))
	return string(b)
}

func (s *PostgresServer) cmd(name string, args ...string) *exec.Cmd {
	c := exec.Command(filepath.Join(s.bin, name), args...)
	c.Dir = filepath.Dir(s.data)
	if s.cred != nil {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return c
}

func (s *PostgresServer) run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := s.cmd(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s\n%s", name, args, err, out, s.Log())
	}
}

// unprivileged returns the credentials of the postgres user, or nobody.
func unprivileged(t testing.TB) *syscall.Credential {
	t.Helper()
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 == nil && err2 == nil {
			return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}
		}
	}
	Unavailable(t, "running as root and neither a postgres nor a nobody user exists to run PostgreSQL as")
	return nil
}

func pgMajor(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

// freeTCPPort returns a loopback TCP port nothing listens on now.
func freeTCPPort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
