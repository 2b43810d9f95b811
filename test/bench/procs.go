package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// proc is a process the suite started, in a process group of its own so
// that a terminal's Ctrl-C reaches only the suite, which then stops it
// (and the driver plugins it started) itself.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error
}

func startProc(logDir, name, bin string, args ...string) (*proc, error) {
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); f.Close(); close(p.done) }()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits up to limit, then kills the whole process
// group (the plugins too). It returns how the process ended.
func (p *proc) stop(limit time.Duration) error {
	if !p.exited() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(limit):
			_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
			<-p.done
			return fmt.Errorf("%s did not stop within %v of SIGTERM; killed", p.name, limit)
		}
	}
	// Whatever of the group is left (a plugin outliving its conductor).
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
	var ee *exec.ExitError
	if errors.As(p.err, &ee) && !ee.Exited() {
		return nil // ended by a signal: the suite's own SIGTERM handling
	}
	return p.err
}

// tail is the last n lines of the process's log.
func (p *proc) tail(n int) string {
	b, _ := os.ReadFile(p.logPath)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
