package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/test/testenv"
)

// rivetBin is the rivet binary built for this run.
var rivetBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rivet-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rivetBin = filepath.Join(dir, "rivet")
	build := exec.Command("go", "build", "-o", rivetBin, "./cmd/rivet")
	build.Dir = testenv.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build rivet: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// devProcess is a running `rivet dev`.
type devProcess struct {
	URL, SimURL string
	cache       string // XDG_CACHE_HOME of the CLI runs (negotiated versions)
	cmd         *exec.Cmd
	out, errOut *testenv.SyncBuffer
}

func freeTCP(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startDev starts rivet dev on free loopback ports with a fresh state
// directory and waits until it has enrolled its simulated nodes.
func startDev(t *testing.T, simNodes int) *devProcess {
	t.Helper()
	return startDevIn(t, t.TempDir(), simNodes)
}

// startDevIn is startDev on a given state directory.
func startDevIn(t *testing.T, state string, simNodes int) *devProcess {
	t.Helper()
	return startDevWith(t, state, simNodes)
}

// startDevWith is startDevIn with extra rivet dev flags.
func startDevWith(t *testing.T, state string, simNodes int, extra ...string) *devProcess {
	t.Helper()
	listen, simListen := freeTCP(t), freeTCP(t)
	d := &devProcess{URL: "http://" + listen, SimURL: "http://" + simListen, cache: t.TempDir(), out: &testenv.SyncBuffer{}, errOut: &testenv.SyncBuffer{}}
	d.cmd = exec.Command(rivetBin, append([]string{"dev", "--state-dir", state, "--listen", listen, "--sim-listen", simListen,
		"--sim-nodes", fmt.Sprint(simNodes)}, extra...)...)
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.errOut
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.stop(t) })
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(d.out.String(), "Rivet dev is running") {
		if time.Now().After(deadline) || d.cmd.ProcessState != nil {
			t.Fatalf("rivet dev did not come up:\n%s\n%s", d.out, d.errOut)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return d
}

// stop interrupts rivet dev as Ctrl-C would and checks it exits 0 and
// leaves no plugin process behind.
func (d *devProcess) stop(t *testing.T) {
	t.Helper()
	if d.cmd.ProcessState != nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("rivet dev exited with %v after SIGINT:\n%s", err, tail(d.errOut.String(), 20))
		}
	case <-time.After(60 * time.Second):
		_ = d.cmd.Process.Kill()
		t.Errorf("rivet dev did not stop within 60 s of SIGINT")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := exec.Command("pgrep", "-f", rivetBin+" plugin serve").Output()
		if len(bytes.TrimSpace(out)) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("plugin processes left after rivet dev stopped: %s", out)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// rivet runs the CLI against d and returns stdout; a non-zero exit fails t.
func (d *devProcess) rivet(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := d.run(args...)
	if err != nil {
		t.Fatalf("rivet %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func (d *devProcess) run(args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, rivetBin, args...)
	cmd.Env = append(os.Environ(), "RIVET_URL="+d.URL, "XDG_CACHE_HOME="+d.cache)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
