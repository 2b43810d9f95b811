package sim

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Simulator is a Redfish service for Options.Systems machines. It is safe for
// concurrent use; create it with New and stop it with Close.
type Simulator struct {
	opts     Options
	systems  []system
	sessions sessionStore
	faults   faultDrawer
	tasks    taskStore // firmware updates (update.go)
	handler  http.Handler

	hanging   atomic.Int64  // requests held by a hang fault right now
	done      chan struct{} // closed by Close: releases hung and delayed requests
	closeOnce sync.Once
}

// New builds a simulator; every system starts powered off with no boot
// override and empty virtual media.
func New(opts Options) (*Simulator, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	s := &Simulator{
		opts:    opts,
		systems: make([]system, opts.Systems),
		done:    make(chan struct{}),
	}
	s.sessions.init(opts)
	s.faults.init(opts.Seed)
	s.handler = s.routes()
	return s, nil
}

// SystemID is the id of the i-th system: "node-i".
func SystemID(i int) string { return "node-" + strconv.Itoa(i) }

// ManagerID is the id of the i-th system's manager: "BMC-node-i".
func ManagerID(i int) string { return "BMC-" + SystemID(i) }

// SystemIDs lists every system id in index order.
func (s *Simulator) SystemIDs() []string {
	ids := make([]string, len(s.systems))
	for i := range ids {
		ids[i] = SystemID(i)
	}
	return ids
}

// index parses a system id; it accepts only the canonical "node-<i>" form.
func (s *Simulator) index(id string) (int, bool) {
	rest, ok := strings.CutPrefix(id, "node-")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 0 || i >= len(s.systems) || strconv.Itoa(i) != rest {
		return 0, false
	}
	return i, true
}

func (s *Simulator) now() int64 { return s.opts.Now().UnixNano() }

// System returns a snapshot of the system with the given id.
func (s *Simulator) System(id string) (State, error) {
	i, ok := s.index(id)
	if !ok {
		return State{}, ErrUnknownSystem
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	defer sys.mu.Unlock()
	return sys.snapshot(id, s.now()), nil
}

// SetPower changes a system's power out of band, at once and without settle
// time, as someone at the console would; powering on boots it.
func (s *Simulator) SetPower(id string, on bool) error {
	i, ok := s.index(id)
	if !ok {
		return ErrUnknownSystem
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	defer sys.mu.Unlock()
	sys.advance(s.now())
	if sys.on == on && sys.settleAt == 0 {
		return nil
	}
	sys.switchPower(on, 0, 0)
	return nil
}

// SessionCount reports how many sessions are live.
func (s *Simulator) SessionCount() int { return s.sessions.count(s.opts.Now()) }

// Handler returns the HTTP handler serving /redfish/v1.
func (s *Simulator) Handler() http.Handler { return s.handler }

// Serve answers HTTP on l until ctx is done or Close is called, then shuts
// down: requests held by a hang fault are released at once and connections
// are closed. It returns nil after such a shutdown.
func (s *Simulator) Serve(ctx context.Context, l net.Listener) error {
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	case <-s.done:
	}
	cancel() // every request's context ends: hangs and delays return now
	shutdownCtx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Close stops every Serve call and releases every request a fault is
// holding, including those served through Handler by another server.
func (s *Simulator) Close() error {
	s.closeOnce.Do(func() { close(s.done) })
	return nil
}
