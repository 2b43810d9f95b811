package rpc

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"
)

// The lean path of HTTPTransport: plain-http calls on keep-alive TCP
// connections that the calling goroutine writes to and reads from itself.
//
// net/http's client hands every request from the caller to a writer
// goroutine and the response back from a reader goroutine, and builds
// header maps both ways; on the API that was about a quarter of its CPU
// per enrolled node. The lean path writes the request from bytes built in
// a reused buffer and parses the response with readLeanResponse, and
// otherwise keeps net/http's behaviour as a client of a conductor:
//
//   - the same request: method, path, Host, User-Agent, Content-Length,
//     Authorization, Content-Type, Idempotency-Key and CallIDHeader (not
//     Accept-Encoding: net/http asks for gzip and decompresses; nothing
//     here would, so nothing asks, and conductors do not compress);
//   - the same limits: [json_rpc] timeout over the whole call, dial
//     included, ctx's deadline and cancellation interrupting a blocked
//     write or read at once (SetDeadline), MaxResponseBytes;
//   - the same errors: a failed dial is UnreachableError unless some
//     attempt wrote the request, a timeout is a url.Error whose Timeout()
//     is true and that is context.DeadlineExceeded, a cancelled ctx gives
//     its cause;
//   - the same resend rule as net/http's for a request that carries an
//     Idempotency-Key (markReplayable): a request that failed on a reused
//     connection before a byte of the response arrived (or before a byte
//     of it was written) goes again, once, on a fresh connection; never
//     after a timeout or cancellation, never after a fresh connection
//     failed;
//   - the same pool: at most 32 idle connections per conductor (100 in
//     all), closed after 90 s idle; a connection goes back only when its
//     response was read whole, was HTTP/1.1 without "Connection: close",
//     and nothing follows it. An idle connection is peeked at before reuse
//     (leanProbe), as net/http's reader goroutine would have noticed
//     the conductor closing it.
//
// https, a proxy from the environment, a host or request id net/http would
// write differently or refuse, go through net/http as before.

const (
	leanMaxIdlePerHost = 32 // MaxIdleConnsPerHost
	leanMaxIdle        = 100
	leanIdleTimeout    = 90 * time.Second
	leanDialTimeout    = 30 * time.Second // http.DefaultTransport's dialer
	leanDialKeepAlive  = 30 * time.Second
	leanMaxBufKeep     = 1 << 20 // request buffers larger than this are not pooled
)

// aLongTimeAgo is a deadline that makes blocked I/O return at once.
var aLongTimeAgo = time.Unix(1, 0)

type leanTransport struct {
	timeout time.Duration
	limit   int64
	auth    string // the Authorization line with its CRLF, or empty
	// dialAddr maps a conductor's host:port to where it is dialed
	// (HTTPTransportOptions.LocalHost); nil dials it as it is.
	dialAddr func(string) string

	mu        sync.Mutex
	hosts     map[string]*leanHost
	idleTotal int
	sweep     *time.Timer // armed while any connection is idle

	bufs sync.Pool // *[]byte, request bytes
}

// leanHost is one conductor as the lean path sees it.
type leanHost struct {
	ok   bool   // false: net/http serves this host
	url  string // for errors, as net/http names the request
	addr string // where to dial
	// fallback is dialed when nothing answers at addr: the conductor's
	// own address when addr is the local one (HTTPTransportOptions.LocalHost).
	fallback string
	// head is the request line, Host and User-Agent, each with its CRLF.
	head []byte
	idle []*leanConn // most recently used last; guarded by leanTransport.mu
}

type leanConn struct {
	conn   net.Conn
	br     *bufio.Reader
	idleAt time.Time
	probe  leanProbe // leanConnAlive's state, made once per connection
}

func newLeanTransport(opts HTTPTransportOptions) *leanTransport {
	l := &leanTransport{timeout: opts.Timeout, limit: opts.MaxResponseBytes, hosts: map[string]*leanHost{}}
	if opts.Username != "" {
		// As http.Request.SetBasicAuth writes it.
		l.auth = "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(opts.Username+":"+opts.Password)) + "\r\n"
	}
	return l
}

// host returns what the lean path knows of host, whose URL is
// rawURL(host).
func (l *leanTransport) host(host string, rawURL func(string) string) *leanHost {
	l.mu.Lock()
	h := l.hosts[host]
	l.mu.Unlock()
	if h != nil {
		return h
	}
	h = newLeanHost(rawURL(host))
	if h.ok && l.dialAddr != nil {
		if local := l.dialAddr(h.addr); local != h.addr {
			h.addr, h.fallback = local, h.addr
		}
	}
	l.mu.Lock()
	if prev := l.hosts[host]; prev != nil {
		h = prev
	} else {
		l.hosts[host] = h
	}
	l.mu.Unlock()
	return h
}

// newLeanHost decides whether the lean path serves rawURL (HTTPTransport.URL
// of a host): a plain-http URL whose host net/http would write and dial
// as it is (ASCII letters, digits, '-', '.', '_', an IPv6 literal without
// zone, a numeric port) and that no proxy from the environment applies to.
func newLeanHost(rawURL string) *leanHost {
	h := &leanHost{url: rawURL}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.Hostname() == "" || u.Path != "/" {
		return h
	}
	for _, c := range []byte(u.Host) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '.' || c == '_' || c == ':' || c == '[' || c == ']':
		default:
			return h
		}
	}
	port := u.Port()
	if port == "" {
		return h
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return h
	}
	if p, err := http.ProxyFromEnvironment(&http.Request{Method: http.MethodPost, URL: u}); err != nil || p != nil {
		return h
	}
	h.ok = true
	h.addr = net.JoinHostPort(u.Hostname(), port)
	h.head = []byte("POST / HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: Go-http-client/1.1\r\n")
	return h
}

// leanHeaderValue says whether net/http writes v as it is in a header (no
// control bytes, nothing it trims); otherwise the request takes net/http.
func leanHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' || c > '~' {
			return false
		}
	}
	return len(v) == 0 || (v[0] != ' ' && v[len(v)-1] != ' ')
}

// leanWatch makes ctx's end interrupt the I/O of the call's current
// connection. Watches are pooled: one whose ctx never fired it is as new.
type leanWatch struct {
	mu     sync.Mutex
	conn   net.Conn
	fired  bool
	fireFn func() // fire, bound once
}

var leanWatches sync.Pool

func getLeanWatch() *leanWatch {
	if w, ok := leanWatches.Get().(*leanWatch); ok {
		return w
	}
	w := &leanWatch{}
	w.fireFn = w.fire
	return w
}

func (w *leanWatch) fire() {
	w.mu.Lock()
	w.fired = true
	if w.conn != nil {
		_ = w.conn.SetDeadline(aLongTimeAgo)
	}
	w.mu.Unlock()
}

// attach watches c; false when ctx has already ended.
func (w *leanWatch) attach(c net.Conn) bool {
	if w == nil {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.conn = c
	return !w.fired
}

func (w *leanWatch) detach() {
	if w != nil {
		w.mu.Lock()
		w.conn = nil
		w.mu.Unlock()
	}
}

// leanTimeoutError is the call outliving [json_rpc] timeout, as
// http.Client reports Client.Timeout.
type leanTimeoutError struct{}

func (leanTimeoutError) Error() string {
	return "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
}
func (leanTimeoutError) Timeout() bool        { return true }
func (leanTimeoutError) Temporary() bool      { return true }
func (leanTimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// send makes one call: wire is the whole request (request line, headers,
// body). The error is classified as HTTPTransport's net/http path's.
func (l *leanTransport) send(ctx context.Context, h *leanHost, host string, wire []byte) (leanResponse, error) {
	var deadline time.Time
	if l.timeout > 0 {
		deadline = time.Now().Add(l.timeout)
	}
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	var w *leanWatch
	if ctx.Done() != nil {
		w = getLeanWatch()
		stop := context.AfterFunc(ctx, w.fireFn)
		defer func() {
			if stop() { // fire will never run: the watch is as new
				w.conn = nil
				leanWatches.Put(w)
			}
		}()
	}
	if err := ctx.Err(); err != nil {
		return leanResponse{}, l.callError(ctx, h, err)
	}
	c, reused, err := l.get(ctx, h, deadline)
	written := false
	for {
		if err != nil {
			return leanResponse{}, l.dialError(ctx, h, host, deadline, written, err)
		}
		var (
			resp         leanResponse
			retry, wrote bool
		)
		resp, retry, wrote, err = l.exchange(ctx, w, c, reused, wire, deadline)
		written = written || wrote
		if err == nil {
			w.detach()
			l.put(h, c, resp.reusable)
			return resp, nil
		}
		w.detach()
		c.conn.Close()
		if !retry {
			return leanResponse{}, l.callError(ctx, h, err)
		}
		c, err = l.dial(ctx, h, deadline)
		reused = false
	}
}

// exchange writes wire on c and reads the response. retry says the
// request may go again on a fresh connection (net/http's rule, above);
// wrote that all of it was written. On error the caller closes c.
func (l *leanTransport) exchange(ctx context.Context, w *leanWatch, c *leanConn, reused bool, wire []byte, deadline time.Time) (resp leanResponse, retry, wrote bool, err error) {
	if err := c.conn.SetDeadline(deadline); err != nil {
		return resp, false, false, err
	}
	if !w.attach(c.conn) {
		return resp, false, false, context.Cause(ctx)
	}
	// Only a failure of the connection, not of the call, is resent.
	resendable := func(err error) bool {
		return reused && ctx.Err() == nil && !errors.Is(err, os.ErrDeadlineExceeded)
	}
	n, err := c.conn.Write(wire)
	if err != nil {
		return resp, n == 0 && resendable(err), false, err
	}
	if _, err := c.br.Peek(1); err != nil {
		return resp, resendable(err), true, err
	}
	resp, err = readLeanResponse(c.br, l.limit)
	if err == nil && c.br.Buffered() > 0 {
		resp.reusable = false // bytes after the response: nothing to trust
	}
	return resp, false, true, err
}

// callError classifies a failure after the connection was made.
func (l *leanTransport) callError(ctx context.Context, h *leanHost, err error) error {
	switch {
	case errors.Is(err, errLeanTooLarge):
		return err
	case ctx.Err() != nil:
		err = context.Cause(ctx)
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = leanTimeoutError{}
	}
	return &url.Error{Op: "Post", URL: h.url, Err: err}
}

// dialError classifies a failed dial as HTTPTransport's net/http path
// does: ctx's end or the call's timeout are that; a dial that failed on
// its own is UnreachableError, unless an earlier attempt wrote the
// request.
func (l *leanTransport) dialError(ctx context.Context, h *leanHost, host string, deadline time.Time, written bool, err error) error {
	if ctx.Err() != nil {
		return &url.Error{Op: "Post", URL: h.url, Err: context.Cause(ctx)}
	}
	if !deadline.IsZero() && !time.Now().Before(deadline) {
		return &url.Error{Op: "Post", URL: h.url, Err: leanTimeoutError{}}
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" && !written {
		return &UnreachableError{Host: host, Err: op.Err}
	}
	return &url.Error{Op: "Post", URL: h.url, Err: err}
}

// get returns an idle connection to h that is still open, or a new one.
func (l *leanTransport) get(ctx context.Context, h *leanHost, deadline time.Time) (*leanConn, bool, error) {
	now := time.Now()
	for {
		l.mu.Lock()
		n := len(h.idle)
		if n == 0 {
			l.mu.Unlock()
			break
		}
		c := h.idle[n-1]
		h.idle[n-1] = nil
		h.idle = h.idle[:n-1]
		l.idleTotal--
		l.mu.Unlock()
		if now.Sub(c.idleAt) < leanIdleTimeout && c.probe.alive() {
			return c, true, nil
		}
		c.conn.Close()
	}
	c, err := l.dial(ctx, h, deadline)
	return c, false, err
}

func (l *leanTransport) dial(ctx context.Context, h *leanHost, deadline time.Time) (*leanConn, error) {
	d := net.Dialer{Timeout: leanDialTimeout, KeepAlive: leanDialKeepAlive, Deadline: deadline}
	conn, err := d.DialContext(ctx, "tcp", h.addr)
	if err != nil && h.fallback != "" && ctx.Err() == nil {
		conn, err = d.DialContext(ctx, "tcp", h.fallback)
	}
	if err != nil {
		return nil, err
	}
	c := &leanConn{conn: conn, br: bufio.NewReaderSize(conn, leanReadBufferSize)}
	c.probe.init(conn)
	return c, nil
}

// put returns c to h's idle connections, or closes it.
func (l *leanTransport) put(h *leanHost, c *leanConn, reusable bool) {
	if reusable {
		c.idleAt = time.Now()
		l.mu.Lock()
		if len(h.idle) < leanMaxIdlePerHost && l.idleTotal < leanMaxIdle {
			h.idle = append(h.idle, c)
			l.idleTotal++
			if l.sweep == nil {
				l.sweep = time.AfterFunc(leanIdleTimeout, l.closeExpired)
			} else if l.idleTotal == 1 {
				l.sweep.Reset(leanIdleTimeout)
			}
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
	}
	c.conn.Close()
}

// closeExpired closes the connections idle for leanIdleTimeout, and runs
// again when the next one will be.
func (l *leanTransport) closeExpired() {
	now := time.Now()
	var expired []*leanConn
	next := time.Duration(-1)
	l.mu.Lock()
	for _, h := range l.hosts {
		kept := h.idle[:0]
		for _, c := range h.idle {
			if left := leanIdleTimeout - now.Sub(c.idleAt); left <= 0 {
				expired = append(expired, c)
			} else {
				kept = append(kept, c)
				if next < 0 || left < next {
					next = left
				}
			}
		}
		clear(h.idle[len(kept):])
		h.idle = kept
	}
	l.idleTotal -= len(expired)
	if next >= 0 {
		l.sweep.Reset(next)
	}
	l.mu.Unlock()
	for _, c := range expired {
		c.conn.Close()
	}
}

// closeIdle closes every idle connection.
func (l *leanTransport) closeIdle() {
	l.mu.Lock()
	var all []*leanConn
	for _, h := range l.hosts {
		all = append(all, h.idle...)
		clear(h.idle)
		h.idle = h.idle[:0]
	}
	l.idleTotal = 0
	l.mu.Unlock()
	for _, c := range all {
		c.conn.Close()
	}
}

// buildRequest appends the request bytes net/http would write for a
// JSON-RPC call to h, less Accept-Encoding.
func (l *leanTransport) buildRequest(buf []byte, h *leanHost, requestID string, id callID, body []byte) []byte {
	buf = append(buf, h.head...)
	buf = append(buf, "Content-Length: "...)
	buf = strconv.AppendInt(buf, int64(len(body)), 10)
	buf = append(buf, "\r\n"...)
	buf = append(buf, l.auth...)
	buf = append(buf, "Content-Type: application/json\r\n"...)
	if requestID != "" {
		buf = append(buf, "Idempotency-Key: "...)
		buf = append(buf, requestID...)
		buf = append(buf, "\r\n"...)
	}
	if id != (callID{}) {
		buf = append(buf, CallIDHeader+": "...)
		buf = id.appendHex(buf)
		buf = append(buf, "\r\n"...)
	}
	buf = append(buf, "\r\n"...)
	return append(buf, body...)
}

func (l *leanTransport) getBuf() *[]byte {
	if b, ok := l.bufs.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 4096)
	return &b
}

func (l *leanTransport) putBuf(b *[]byte) {
	if cap(*b) <= leanMaxBufKeep {
		*b = (*b)[:0]
		l.bufs.Put(b)
	}
}
