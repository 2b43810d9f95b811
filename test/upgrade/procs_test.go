package upgrade

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/test/testenv"
)

// proc is a child process of the test.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  *testenv.SyncBuffer
	done chan struct{}
	err  error // the exit, once done is closed
}

// startProc starts bin with args; its output goes to an in-memory log
// (read by the test, its tail printed when the test fails) and to a file
// in logDir, kept when the test fails.
func startProc(t *testing.T, logDir, name, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(bin, args...), log: &testenv.SyncBuffer{}, done: make(chan struct{})}
	f, err := os.OpenFile(filepath.Join(logDir, strings.NewReplacer(" ", "_", "(", "", ")", "", ",", "").Replace(name)+".log"),
		os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	w := io.MultiWriter(p.log, f)
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { <-p.done; f.Close() }()
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	return p
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended (and was reaped).
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits for the exit; after limit it kills the
// process and says so. The returned error is the exit status.
func (p *proc) stop(limit time.Duration) (exit error, timedOut bool) {
	if p.exited() {
		return p.err, false
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err, false
	case <-time.After(limit):
		_ = p.cmd.Process.Kill()
		<-p.done
		return p.err, true
	}
}

// kill ends the process at once (cleanup).
func (p *proc) kill() {
	if !p.exited() {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// procID names a process across pid reuse: the pid and its start time in
// clock ticks since boot (field 22 of /proc/PID/stat).
type procID struct {
	pid   int
	start string
	exe   string
}

func (id procID) String() string { return fmt.Sprintf("pid %d (%s)", id.pid, id.exe) }

// statOf reads /proc/PID/stat: parent pid, state and start time.
func statOf(pid int) (ppid int, state, start string, err error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, "", "", err
	}
	s := string(b)
	// The command name is in parentheses and may hold spaces.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, "", "", fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, "", "", fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0], f[19], err
}

// children lists the processes whose parent is pid.
func children(pid int) ([]procID, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []procID
	for _, e := range entries {
		cpid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, _, start, err := statOf(cpid)
		if err != nil || ppid != pid {
			continue
		}
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		out = append(out, procID{pid: cpid, start: start, exe: exe})
	}
	return out, nil
}

// alive reports whether the process still exists (a zombie counts: nobody
// reaped it).
func (id procID) alive() bool {
	_, _, start, err := statOf(id.pid)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	return err == nil && start == id.start
}

// keptLogDir is a directory for the processes' logs that survives a
// failed test (its path is printed) and is removed after a passing one.
func keptLogDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "rivet-upgrade-logs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("every process's full log is kept in %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	return dir
}
