package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"
)

// ErrClosed is returned for calls made after Manager.Close.
var ErrClosed = errors.New("plugin host closed")

// supervisor owns one plugin: it starts it on demand, retires it on crash,
// restarts it with backoff and swaps it when its binary changes.
type supervisor struct {
	cfg Config
	src Source
	log *slog.Logger

	mu        sync.Mutex
	cur       *instance // nil when not running
	failures  int       // consecutive failed starts or crashes
	lastFault string    // why the last start failed or the last process died
	nextStart time.Time // no start attempt before this
	binary    os.FileInfo
	closed    bool
	started   bool // an instance started once: the next start is a restart
}

func newSupervisor(cfg Config, src Source) *supervisor {
	return &supervisor{cfg: cfg, src: src, log: cfg.Logger.With("driver", src.Driver)}
}

// registration returns a copy of the current instance's registration, if
// running.
func (s *supervisor) registration() (Registration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return Registration{}, false
	}
	r := s.cur.reg
	r.HardwareTypes = slices.Clone(r.HardwareTypes)
	r.Capabilities = slices.Clone(r.Capabilities)
	r.Interfaces = maps.Clone(r.Interfaces)
	return r, true
}

// acquire returns a running instance with one in-flight call counted,
// starting one if needed. The caller must call release.
func (s *supervisor) acquire(ctx context.Context) (*instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.closed {
			return nil, fmt.Errorf("driver %s: %w", s.src.Driver, ErrClosed)
		}
		if s.cur != nil && !s.cur.client.Exited() {
			s.cur.inflight.Add(1)
			return s.cur, nil
		}
		if s.cur != nil { // died between calls
			s.retireLocked(s.cur, "plugin process exited")
		}
		if wait := time.Until(s.nextStart); wait > 0 {
			// A caller whose deadline comes first is told now, not at it.
			if dl, ok := ctx.Deadline(); ok && dl.Before(s.nextStart) {
				return nil, &PluginCrashedError{Driver: s.src.Driver, Err: fmt.Errorf(
					"failed %d times in a row, next restart in %s (last: %s)",
					s.failures, wait.Round(time.Millisecond), s.lastFault)}
			}
			s.mu.Unlock()
			err := sleepCtx(ctx, wait)
			s.mu.Lock()
			if err != nil {
				return nil, fmt.Errorf("driver %s: waiting to restart plugin: %w", s.src.Driver, err)
			}
			continue
		}
		inst, err := s.startLocked(ctx)
		if err != nil {
			return nil, err
		}
		s.cur = inst
	}
}

// startLocked starts a new instance and records the binary it tried, so a
// refused binary is tried again only once it changes. The start is bounded
// by StartTimeout, not by the deadline of the call that needed it: every
// later call needs the plugin too, and a start cut short by one caller's
// deadline would count as the plugin's failure and lengthen the backoff.
func (s *supervisor) startLocked(ctx context.Context) (*instance, error) {
	if fi, err := os.Stat(s.src.Path); err == nil {
		s.binary = fi
	}
	s.restarting()
	inst, err := startInstance(context.WithoutCancel(ctx), s.cfg, s.src)
	if err != nil {
		s.failedLocked("start failed: " + err.Error())
		return nil, err
	}
	return inst, nil
}

// restarting tells the Observer about a start that is not the first.
func (s *supervisor) restarting() {
	if s.started && s.cfg.Observer != nil {
		s.cfg.Observer.PluginRestarted(s.src.Driver)
	}
	s.started = true
}

// binaryChanged reports whether the plugin's file differs from the one last
// started (or tried).
func (s *supervisor) binaryChanged() bool {
	fi, err := os.Stat(s.src.Path)
	s.mu.Lock()
	defer s.mu.Unlock()
	return err == nil && s.binary != nil && !sameBinary(s.binary, fi)
}

// release ends a call on inst. A transport failure retires inst and turns
// err into a *PluginCrashedError naming the driver and op.
func (s *supervisor) release(inst *instance, op string, err error) error {
	inst.inflight.Done()
	var crashed *PluginCrashedError
	if !errors.As(err, &crashed) {
		if err == nil && time.Since(inst.reg.StartedAt) >= s.cfg.StableAfter {
			s.mu.Lock()
			s.failures = 0
			s.mu.Unlock()
		}
		return err
	}
	s.mu.Lock()
	if s.cur == inst {
		s.retireLocked(inst, "call failed: "+crashed.Err.Error())
	}
	s.mu.Unlock()
	return &PluginCrashedError{Driver: s.src.Driver, Err: fmt.Errorf("%s: %w", op, crashed.Err)}
}

// retireLocked forgets inst and kills its process (a no-op if it is already
// dead), and schedules the next start with backoff.
func (s *supervisor) retireLocked(inst *instance, why string) {
	s.cur = nil
	s.failedLocked(why)
	s.log.Warn("driver plugin crashed; it restarts on next use", "pid", inst.reg.PID, "reason", why,
		"consecutive_failures", s.failures, "restart_in", time.Until(s.nextStart).Round(time.Millisecond))
	inst.client.Kill()
}

// failedLocked counts a failed start or a crash and schedules the next
// start attempt with backoff.
func (s *supervisor) failedLocked(why string) {
	s.failures++
	s.lastFault = why
	s.nextStart = time.Now().Add(s.cfg.backoff(s.failures))
}

// swapIfChanged starts the plugin's binary again when the file changed since
// the running instance started, moves new calls to it, then drains and
// kills the old instance. It reports whether a swap happened.
func (s *supervisor) swapIfChanged(ctx context.Context) bool {
	fi, err := os.Stat(s.src.Path)
	s.mu.Lock()
	old, prev := s.cur, s.binary
	s.mu.Unlock()
	if err != nil || old == nil || prev == nil || sameBinary(prev, fi) {
		return false
	}
	s.log.Info("driver plugin binary changed; starting the new one", "path", s.src.Path)
	s.mu.Lock()
	s.restarting()
	s.mu.Unlock()
	inst, err := startInstance(ctx, s.cfg, s.src)
	s.mu.Lock()
	s.binary = fi // do not retry a bad binary every tick; a further change will
	if err != nil {
		s.mu.Unlock()
		s.log.Error("new driver plugin binary refused; the old process keeps serving", "error", err)
		return false
	}
	if s.closed || s.cur != old {
		s.mu.Unlock()
		inst.client.Kill()
		return false
	}
	s.cur = inst
	s.mu.Unlock()
	s.drain(old)
	return true
}

// drain waits for old's in-flight calls (at most DrainTimeout) and kills it.
func (s *supervisor) drain(old *instance) {
	done := make(chan struct{})
	go func() { old.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(s.cfg.DrainTimeout):
		s.log.Warn("replaced driver plugin still busy after drain timeout; killing it", "pid", old.reg.PID)
	}
	old.client.Kill()
	s.log.Info("replaced driver plugin stopped", "pid", old.reg.PID)
}

func sameBinary(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

// close kills the running instance; later calls fail with ErrClosed.
func (s *supervisor) close() {
	s.mu.Lock()
	s.closed = true
	cur := s.cur
	s.cur = nil
	s.mu.Unlock()
	if cur != nil {
		cur.client.Kill()
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
