package faults

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/plugins/plugintest"
	"github.com/rivetmetal/rivet/test/testenv"
)

// The binaries of this run.
var rivetBin, simBin, testPluginBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rivet-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 1
	for _, b := range []struct {
		dst       *string
		pkg, name string
	}{
		{&rivetBin, "github.com/rivetmetal/rivet/cmd/rivet", "rivet"},
		{&simBin, "github.com/rivetmetal/rivet/cmd/rivet-sim", "rivet-sim"},
		{&testPluginBin, "github.com/rivetmetal/rivet/plugins/internal/testplugin", "rivet-driver-test"},
	} {
		if *b.dst, err = plugintest.Build(dir, b.pkg, b.name); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n", b.name, err)
			break
		}
	}
	if err == nil {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running process of a test.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  *testenv.SyncBuffer
	done chan struct{}
	err  error
}

// startProc runs bin with args and extra environment; it is killed at
// cleanup, and its output is shown if the test failed.
func startProc(t *testing.T, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(bin, args...), log: &testenv.SyncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("%s output (access log lines left out):\n%s", name, tail(withoutAccessLog(p.log.String()), 150))
		}
	})
	return p
}

// running fails t if the process has exited.
func (p *proc) running(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
		t.Fatalf("%s exited: %v\n%s", p.name, p.err, tail(p.log.String(), 40))
	default:
	}
}

func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// rivet runs a rivet command to completion and returns its output.
func rivet(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(rivetBin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// writeFile writes content to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitUntil polls cond every 50 ms until it holds, for at most limit, and
// returns how long it took.
func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

// waitHTTP waits until GET url answers 200 (the API root is public).
func waitHTTP(t *testing.T, p *proc, url string) {
	t.Helper()
	c := &http.Client{Timeout: 2 * time.Second}
	waitUntil(t, 90*time.Second, p.name+" serving "+url, func() bool {
		p.running(t)
		res, err := c.Get(url)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}

// withoutAccessLog drops the API's one line per request, which the tests'
// polling makes most of a log.
func withoutAccessLog(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if !strings.Contains(line, " msg=request ") {
			b.WriteString(line)
		}
	}
	return b.String()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// service is a rivet API (all-in-one or api) with its configuration.
type service struct {
	*proc
	api  *apiClient
	conf string
}

// allInOne creates the schema of the SQLite database at dbPath and runs
// rivet all-in-one on it, waiting until the API serves. env carries the
// test's options as RIVET_<SECTION>_<OPTION> variables, over the file's;
// pluginDir ("" for none) is [conductor] plugin_dir.
func allInOne(t *testing.T, dbPath, pluginDir string, env ...string) *service {
	t.Helper()
	port := freePort(t)
	dir := t.TempDir()
	if pluginDir == "" {
		pluginDir = dir
	}
	conf := writeFile(t, dir, "rivet.conf", fmt.Sprintf(`[DEFAULT]
host = faults-aio
log_level = debug
[database]
connection = sqlite:///%s
[api]
host_ip = 127.0.0.1
port = %d
[conductor]
heartbeat_interval = 1
heartbeat_timeout = 10
check_provision_state_interval = 1
plugin_dir = %s
graceful_shutdown_timeout = 5
`, dbPath, port, pluginDir))
	if out, err := rivet(t, env, "--config-file", conf, "dbsync", "create-schema"); err != nil {
		t.Fatalf("rivet dbsync create-schema: %v\n%s", err, out)
	}
	p := startProc(t, "rivet all-in-one", env, rivetBin, "--config-file", conf, "all-in-one")
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHTTP(t, p, url+"/")
	return &service{proc: p, api: newAPIClient(url), conf: conf}
}
