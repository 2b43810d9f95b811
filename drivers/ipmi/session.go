package ipmi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/types"
)

// ErrClosed is returned by calls made after Driver.Close.
var ErrClosed = errors.New("driver closed")

// ErrMalformedAnswer is returned when go-ipmi panicked while reading what
// the BMC (or whoever sent the datagram) answered.
var ErrMalformedAnswer = errors.New("malformed answer from the BMC")

// shielded runs one go-ipmi call and turns a panic inside it into
// ErrMalformedAnswer. go-ipmi v0.9 slices datagrams it has not checked the
// length of (FuzzIPMIResponses found an encrypted payload sent before the
// session keys exist panicking in decryptPayload); a UDP datagram, which
// anyone on the BMC network can spoof before authentication, must not
// crash the plugin. The client is not trusted afterwards: callers drop it.
func shielded(call func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w (go-ipmi: %v)", ErrMalformedAnswer, r)
		}
	}()
	return call()
}

// credentials are what a session was opened with; a call with different
// ones (a password change) reopens it rather than reusing a stale login.
type credentials struct {
	user, password string
	suite, retries int
	timeout        time.Duration
	priv           types.PrivilegeLevel
}

func (p params) credentials() credentials {
	return credentials{user: p.user, password: p.password, suite: p.suite, retries: p.retries, timeout: p.timeout, priv: p.priv}
}

// session is the one RMCP+ session kept per BMC. Holding sem (a one-slot
// semaphore, so that waiting honours ctx) grants the right to use client:
// go-ipmi allows one exchange per client, and one command at a time is
// all a BMC should get from us anyway.
type session struct {
	sem chan struct{}

	// Guarded by sem.
	client   *client.Client
	creds    credentials
	lastCmd  time.Time // end of the last command, for pacing
	lastUsed time.Time
}

func newSession() *session { return &session{sem: make(chan struct{}, 1)} }

func (s *session) lock(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *session) tryLock() bool {
	select {
	case s.sem <- struct{}{}:
		return true
	default:
		return false
	}
}

func (s *session) unlock() { <-s.sem }

// idleFor is how long the open session has gone unused.
func (s *session) idleFor() time.Duration { return time.Since(s.lastUsed) }

// pace sleeps until interval has passed since the last command ended.
func (s *session) pace(ctx context.Context, interval time.Duration) error {
	wait := time.Until(s.lastCmd.Add(interval))
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// dialer opens the datagram connection to a BMC in place of a UDP socket
// (go-ipmi's proxy hook). Only tests set one: the fuzz target feeds the
// driver datagrams in memory rather than paying a socket and a timeout per
// input.
type dialer interface {
	Dial(network, addr string) (net.Conn, error)
}

// connect opens a session with p's credentials, over dial when not nil. A
// failed Connect still owns a UDP socket, so it is closed at once.
func (s *session) connect(ctx context.Context, p params, dial dialer) error {
	c, err := client.NewClient(p.host, p.port, p.user, p.password)
	if err != nil {
		return err
	}
	if dial != nil {
		c.WithUDPProxy(dial)
	}
	c.WithTimeout(p.timeout).WithRetry(p.retries).WithCipherSuiteID(types.CipherSuiteID(p.suite))
	c.WithMaxPrivilegeLevel(p.priv)
	if err := s.pace(ctx, p.interval); err != nil {
		return err
	}
	err = shielded(func() error { return c.Connect(ctx) })
	s.lastCmd = time.Now()
	if err != nil {
		closeNow(c)
		return err
	}
	s.client, s.creds, s.lastUsed = c, p.credentials(), s.lastCmd
	return nil
}

// drop forgets the session. polite sends Close Session (bounded by the
// command timeout) to free the BMC's slot; a session known dead is only
// torn down locally. Either way go-ipmi's keepalive goroutine stops.
func (s *session) drop(polite bool) {
	if s.client == nil {
		return
	}
	c := s.client
	s.client = nil
	if !polite {
		closeNow(c)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.creds.timeout)
	defer cancel()
	// A panic while reading the answer to Close Session comes after
	// go-ipmi stopped the keepalive and before it closed the socket, which
	// then stays open: rare (a malformed answer to that one command) and
	// not repairable from here, as a second Close panics in go-ipmi.
	_ = shielded(func() error { return c.Close(ctx) })
	s.lastCmd = time.Now()
}

// closeNow closes c without waiting for the BMC: with a cancelled context
// Close Session fails at once and the socket and keepalive are released.
func closeNow(c *client.Client) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = c.Close(ctx)
}

// run sends one command (fn) over the open session, paced.
func (s *session) run(ctx context.Context, p params, fn func(context.Context, *client.Client) error) error {
	if err := s.pace(ctx, p.interval); err != nil {
		return err
	}
	c := s.client
	err := shielded(func() error { return fn(ctx, c) })
	s.lastCmd = time.Now()
	s.lastUsed = s.lastCmd
	return err
}

// pool holds one session per BMC address. Entries are never removed (a
// closed session is a few words); their RMCP+ sessions are.
type pool struct {
	log  *slog.Logger
	idle time.Duration

	mu       sync.Mutex
	sessions map[string]*session
	closed   bool
	stop     chan struct{}
	done     chan struct{}
}

func newPool(log *slog.Logger, idle time.Duration) *pool {
	p := &pool{log: log, idle: idle, sessions: map[string]*session{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go p.reap()
	return p
}

func (p *pool) get(addr string) (*session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	s, ok := p.sessions[addr]
	if !ok {
		s = newSession()
		p.sessions[addr] = s
	}
	return s, nil
}

func (p *pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// reap closes sessions idle for longer than p.idle, so that an idle driver
// holds no BMC session slots and no keepalive goroutines.
func (p *pool) reap() {
	defer close(p.done)
	t := time.NewTicker(p.idle / 2)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		p.mu.Lock()
		var idle []*session
		for _, s := range p.sessions {
			idle = append(idle, s)
		}
		p.mu.Unlock()
		for _, s := range idle {
			if !s.tryLock() {
				continue
			}
			if s.client != nil && s.idleFor() > p.idle {
				s.drop(true)
			}
			s.unlock()
		}
	}
}

// close ends every session, waiting for calls in flight to finish (their
// own deadlines bound that), and stops the reaper.
func (p *pool) close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.stop)
	all := make([]*session, 0, len(p.sessions))
	for _, s := range p.sessions {
		all = append(all, s)
	}
	p.mu.Unlock()
	<-p.done
	var wg sync.WaitGroup
	errs := make([]error, len(all))
	for i, s := range all {
		wg.Go(func() {
			if err := s.lock(ctx); err != nil {
				errs[i] = err
				return
			}
			s.drop(ctx.Err() == nil)
			s.unlock()
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
