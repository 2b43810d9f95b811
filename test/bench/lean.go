package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// The read workloads (get, list, detail) send one GET after another at
// concurrency 16 from the machine that runs the server. With net/http the
// client spent about 86 µs of CPU per GET /v1/nodes/{uuid} (request and
// header maps, a fresh body slice, the transport's reader and writer
// goroutines) against some 230 µs for the whole server side, so a third of
// the CPU the benchmark was measuring went to the benchmark itself. The
// lean client below does only what those workloads need: one keep-alive
// HTTP/1.1 connection per worker, a request written from bytes built once,
// and a response parsed from a bufio.Reader into a buffer both reused
// across requests. Enroll, one POST after another at concurrency 8, cost
// some 200–240 µs of client CPU per node through net/http (json.Marshal of
// a map, the transport, json.Unmarshal of the 1.5 KB reply), so it sends
// its POSTs on the same kind of connection. The client speaks plain http
// only; https and every other request of the bench (power, lifecycle, the
// waits) go through net/http.

const (
	// httpClientLean and httpClientNetHTTP are the values of --http-client.
	httpClientLean    = "lean"
	httpClientNetHTTP = "net/http"

	// requestTimeout bounds one request, as http.Client.Timeout does for
	// the net/http path.
	requestTimeout = time.Minute
	// leanMaxBody bounds a response body: a larger Content-Length or chunk
	// is a protocol error rather than an allocation.
	leanMaxBody = 1 << 30
	// leanReadBuffer is the bufio.Reader size; a status, header, chunk-size
	// or trailer line longer than that is refused.
	leanReadBuffer = 16 << 10
)

// getter sends GETs of one worker of a read workload. get returns the
// body of a response whose status is want; the body is valid until the
// next call. A getter belongs to one goroutine.
type getter interface {
	get(ctx context.Context, path string, want int) ([]byte, error)
	close()
}

// newGetter returns a getter for one worker: a lean connection when the
// client uses it, else the shared net/http client.
func (c *client) newGetter() getter {
	if l := c.newLeanConn(); l != nil {
		return l
	}
	return &netGetter{c: c}
}

// newLeanConn returns one worker's lean connection, or nil when the
// client uses net/http.
func (c *client) newLeanConn() *leanConn {
	if c.lean == nil {
		return nil
	}
	return &leanConn{target: c.lean, timeout: requestTimeout}
}

// netGetter is the net/http path of a read workload: client.do.
type netGetter struct {
	c    *client
	body []byte
}

func (g *netGetter) get(ctx context.Context, path string, want int) ([]byte, error) {
	err := g.c.do(ctx, http.MethodGet, path, nil, want, &g.body)
	return g.body, err
}

func (g *netGetter) close() {}

// leanTarget is what every lean connection of a client shares: where to
// dial and the header lines every request carries.
type leanTarget struct {
	addr   string // host:port to dial
	prefix string // path of the base URL, put before each request path
	// header is the request's header lines after the request line,
	// ending with the blank line.
	header []byte
}

// newLeanTarget prepares the lean client for base, or says why it cannot
// serve it (then the bench uses net/http).
func newLeanTarget(base string, o options) (*leanTarget, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("scheme %q is not plain http", u.Scheme)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Host == "" {
		return nil, errors.New("the URL has user info, a query, a fragment or no host")
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	// The same header lines as client.do's request, in net/http's
	// canonical spelling, except Accept-Encoding: net/http's transport
	// adds gzip and decompresses transparently; this client does not
	// decompress, so it does not ask for it (Rivet does not compress).
	var h bytes.Buffer
	fmt.Fprintf(&h, "Host: %s\r\n", u.Host)
	h.WriteString("User-Agent: Go-http-client/1.1\r\n")
	h.WriteString("Accept: application/json\r\n")
	if o.username != "" {
		cred := base64.StdEncoding.EncodeToString([]byte(o.username + ":" + o.password))
		fmt.Fprintf(&h, "Authorization: Basic %s\r\n", cred)
	}
	fmt.Fprintf(&h, "X-Openstack-Ironic-Api-Version: %s\r\n\r\n", o.apiVersion)
	return &leanTarget{addr: net.JoinHostPort(u.Hostname(), port), prefix: u.EscapedPath(), header: h.Bytes()}, nil
}

// leanConn is one worker's keep-alive connection. It is dialled on first
// use and again after any error or a response that closes it.
type leanConn struct {
	target  *leanTarget
	timeout time.Duration

	conn   net.Conn
	br     *bufio.Reader
	served int // responses read on conn: a reused conn may retry once

	method string // the method and path req was built for
	path   string
	req    []byte
	body   []byte

	// ctx is the context stopCtx watches: when it ends, the in-flight
	// read or write fails at once (deadline in the past). mu guards conn
	// and cancelled against that callback.
	ctx       context.Context
	stopCtx   func() bool
	mu        sync.Mutex
	cancelled bool
}

// errIdleClosed marks a reused connection the server closed (or reset)
// before sending a byte of the response: a GET is sent again once on a
// new connection, as net/http does for an idempotent request; a POST is
// not (see post).
var errIdleClosed = errors.New("connection closed by the server before a response")

func (l *leanConn) get(ctx context.Context, path string, want int) ([]byte, error) {
	if err := l.watch(ctx); err != nil {
		return nil, err
	}
	if l.method != http.MethodGet || path != l.path {
		l.method, l.path = http.MethodGet, path
		l.req = append(append(append(append(l.req[:0], "GET "...), l.target.prefix...), path...), " HTTP/1.1\r\n"...)
		l.req = append(l.req, l.target.header...)
	}
	body, err := l.roundTrip(ctx, want)
	if errors.Is(err, errIdleClosed) {
		body, err = l.roundTrip(ctx, want)
	}
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err() // cut off by the context, not a protocol failure
	}
	return body, err
}

// post sends body, a JSON document, as a POST to path and returns the
// body of a response whose status is want; it is valid until the next
// call. The request carries get's headers plus Content-Type and
// Content-Length, as client.do's POST does, and is written with its body
// in one write.
//
// A POST is never sent twice. Once its bytes have been written the
// server may have read and acted on them even if the connection then
// fails (a second enrolment would create a second node), and a reused
// connection the server closed while idle looks the same from here: the
// write succeeds into the socket buffer and the read meets EOF or a reset.
// So any failure, on a new or a reused connection, is the request's error
// (counted as net/http's errors are) and the next request dials again.
// net/http does not resend such a POST either (its Transport retries a
// request that is not idempotent, and has no Idempotency-Key, only when
// not a byte of it was written); it does see most idle closes before
// writing, because its connection's reader goroutine notices the EOF
// while the connection sits in the pool, and then dials instead. This
// client has no such reader, and a keep-alive connection is idle here only
// for the time between two requests of a worker, far shorter than any
// server's idle timeout.
func (l *leanConn) post(ctx context.Context, path string, body []byte, want int) ([]byte, error) {
	if err := l.watch(ctx); err != nil {
		return nil, err
	}
	h := l.target.header
	l.method, l.path = http.MethodPost, path
	l.req = append(append(append(append(l.req[:0], "POST "...), l.target.prefix...), path...), " HTTP/1.1\r\n"...)
	l.req = append(l.req, h[:len(h)-2]...) // without the blank line
	l.req = append(l.req, "Content-Type: application/json\r\nContent-Length: "...)
	l.req = strconv.AppendInt(l.req, int64(len(body)), 10)
	l.req = append(append(l.req, "\r\n\r\n"...), body...)
	resp, err := l.roundTrip(ctx, want)
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return resp, err
}

// watch makes ctx's end interrupt the connection's I/O; one callback per
// context, not per request.
func (l *leanConn) watch(ctx context.Context) error {
	if ctx != l.ctx {
		if l.stopCtx != nil {
			l.stopCtx()
		}
		l.mu.Lock()
		l.cancelled = false
		l.mu.Unlock()
		l.ctx = ctx
		l.stopCtx = context.AfterFunc(ctx, func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.cancelled = true
			if l.conn != nil {
				l.conn.SetDeadline(time.Unix(1, 0))
			}
		})
	}
	return ctx.Err()
}

// roundTrip sends l.req and reads the response. Any failure drops the
// connection, so the next request starts on a new one.
func (l *leanConn) roundTrip(ctx context.Context, want int) ([]byte, error) {
	reused := l.conn != nil
	if !reused {
		if err := l.dial(ctx); err != nil {
			return nil, err
		}
	}
	// A request's deadline; set after the context check so that a
	// cancellation racing with it still wins (the callback sets a past
	// deadline after ctx.Err() becomes non-nil).
	if err := l.conn.SetDeadline(time.Now().Add(l.timeout)); err != nil {
		l.drop()
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	body, closeAfter, err := l.exchange(want, reused)
	if err != nil && !isStatusError(err) {
		l.drop()
		return nil, err
	}
	l.served++
	if closeAfter {
		l.drop()
	}
	return body, err
}

func (l *leanConn) dial(ctx context.Context) error {
	d := net.Dialer{Timeout: l.timeout}
	c, err := d.DialContext(ctx, "tcp", l.target.addr)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.conn, l.served = c, 0
	cancelled := l.cancelled
	l.mu.Unlock()
	if cancelled {
		l.drop()
		return ctx.Err()
	}
	if l.br == nil {
		l.br = bufio.NewReaderSize(c, leanReadBuffer)
	} else {
		l.br.Reset(c)
	}
	return nil
}

// drop closes the connection.
func (l *leanConn) drop() {
	l.mu.Lock()
	c := l.conn
	l.conn = nil
	l.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

func (l *leanConn) close() {
	if l.stopCtx != nil {
		l.stopCtx()
		l.stopCtx = nil
	}
	l.drop()
}

// statusError is a complete response with another status than the one
// wanted: an error for the request, but the connection stays usable.
type statusError struct{ msg string }

func (e *statusError) Error() string { return e.msg }

func isStatusError(err error) bool {
	var s *statusError
	return errors.As(err, &s)
}

// idleClosed says whether err, met before any byte of the response on a
// reused connection, is the server having closed that connection.
func idleClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// exchange writes the request and reads one response. closeAfter says the
// server will not take another request on this connection.
func (l *leanConn) exchange(want int, reused bool) (body []byte, closeAfter bool, err error) {
	if _, err := l.conn.Write(l.req); err != nil {
		if reused && idleClosed(err) {
			return nil, false, fmt.Errorf("%s %s: %w: %v", l.method, l.path, errIdleClosed, err)
		}
		return nil, false, fmt.Errorf("%s %s: sending the request: %w", l.method, l.path, err)
	}
	if _, err := l.br.Peek(1); err != nil {
		if reused && idleClosed(err) {
			return nil, false, fmt.Errorf("%s %s: %w: %v", l.method, l.path, errIdleClosed, err)
		}
		return nil, false, fmt.Errorf("%s %s: reading the response: %w", l.method, l.path, err)
	}
	status, closeAfter, err := l.readResponse()
	if err != nil {
		return nil, false, fmt.Errorf("%s %s: %w", l.method, l.path, err)
	}
	if status != want {
		return l.body, closeAfter, &statusError{fmt.Sprintf("%s %s: HTTP %d (want %d): %.300s", l.method, l.path, status, want, l.body)}
	}
	return l.body, closeAfter, nil
}

// readResponse reads a status line, headers and body into l.body,
// skipping interim 1xx responses.
func (l *leanConn) readResponse() (status int, closeAfter bool, err error) {
	for {
		line, err := l.line("status line")
		if err != nil {
			return 0, false, err
		}
		var http10 bool
		status, http10, err = parseStatusLine(line)
		if err != nil {
			return 0, false, err
		}
		length, chunked, closes, err := l.readHeaders("header")
		if err != nil {
			return 0, false, err
		}
		closeAfter = closes || http10
		if status >= 100 && status < 200 {
			if status == http.StatusSwitchingProtocols {
				return 0, false, errors.New("unexpected 101 Switching Protocols")
			}
			continue // 100 Continue, 103 Early Hints: the response follows
		}
		l.body = l.body[:0]
		switch {
		case status == http.StatusNoContent || status == http.StatusNotModified:
			// no body, whatever the headers say
		case chunked:
			err = l.readChunked()
		case length >= 0:
			err = l.readN(int(length))
		default:
			err = errors.New("the response has neither Content-Length nor chunked Transfer-Encoding")
		}
		return status, closeAfter, err
	}
}

// line reads one CRLF (or LF) terminated line without its terminator; the
// slice is valid until the next read.
func (l *leanConn) line(what string) ([]byte, error) {
	b, err := l.br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%s longer than %d bytes", what, leanReadBuffer)
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("reading the %s: %w", what, err)
	}
	b = b[:len(b)-1]
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b, nil
}

// parseStatusLine parses "HTTP/1.x NNN reason".
func parseStatusLine(line []byte) (status int, http10 bool, err error) {
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || (line[7] != '0' && line[7] != '1') || line[8] != ' ' ||
		(len(line) > 12 && line[12] != ' ') {
		return 0, false, fmt.Errorf("malformed status line %.80q", line)
	}
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return 0, false, fmt.Errorf("malformed status code in %.80q", line)
		}
		status = status*10 + int(c-'0')
	}
	if status < 100 {
		return 0, false, fmt.Errorf("malformed status code in %.80q", line)
	}
	return status, line[7] == '0', nil
}

// readHeaders reads header lines up to the blank line and returns what
// framing needs: Content-Length (-1 when absent), whether the body is
// chunked, and whether the server closes the connection after it.
func (l *leanConn) readHeaders(what string) (length int64, chunked, closes bool, err error) {
	length = -1
	for {
		line, err := l.line(what)
		if err != nil {
			return 0, false, false, err
		}
		if len(line) == 0 {
			return length, chunked, closes, nil
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || line[0] == ' ' || line[0] == '\t' {
			return 0, false, false, fmt.Errorf("malformed %s line %.80q", what, line)
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case asciiEqualFold(name, "Content-Length"):
			n, perr := strconv.ParseInt(string(value), 10, 64)
			if perr != nil || n < 0 || n > leanMaxBody || (length >= 0 && n != length) {
				return 0, false, false, fmt.Errorf("bad or conflicting Content-Length %.40q", value)
			}
			length = n
		case asciiEqualFold(name, "Transfer-Encoding"):
			if !asciiEqualFold(value, "chunked") {
				return 0, false, false, fmt.Errorf("unsupported Transfer-Encoding %.40q", value)
			}
			chunked = true
		case asciiEqualFold(name, "Connection"):
			for _, tok := range bytes.Split(value, []byte(",")) {
				if asciiEqualFold(bytes.TrimSpace(tok), "close") {
					closes = true
				}
			}
		}
	}
}

// readN reads an n-byte body into l.body.
func (l *leanConn) readN(n int) error {
	start := len(l.body)
	if cap(l.body)-start < n {
		grown := make([]byte, start, start+n)
		copy(grown, l.body)
		l.body = grown
	}
	l.body = l.body[:start+n]
	if _, err := io.ReadFull(l.br, l.body[start:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("reading a %d-byte body: %w", n, err)
	}
	return nil
}

// readChunked reads a chunked body into l.body: size lines (extensions
// ignored), data, the CRLF after each chunk, then trailers (ignored).
func (l *leanConn) readChunked() error {
	for {
		line, err := l.line("chunk size")
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		line = bytes.TrimRight(line, " \t")
		size, perr := strconv.ParseUint(string(line), 16, 64)
		if perr != nil || len(line) == 0 || size > uint64(leanMaxBody-len(l.body)) {
			return fmt.Errorf("bad chunk size %.40q", line)
		}
		if size == 0 {
			if _, _, _, err := l.readHeaders("trailer"); err != nil {
				return err
			}
			return nil
		}
		if err := l.readN(int(size)); err != nil {
			return err
		}
		crlf, err := l.line("chunk end")
		if err != nil {
			return err
		}
		if len(crlf) != 0 {
			return fmt.Errorf("chunk of %d bytes followed by %.40q, not CRLF", size, crlf)
		}
	}
}

// asciiEqualFold compares b with s ignoring ASCII case, without
// allocating.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
