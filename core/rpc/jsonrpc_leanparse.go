package rpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The response parser of the lean client (jsonrpc_lean.go). It reads what
// an HTTP/1.x server answers a POST with, as net/http's http.ReadResponse
// plus its Transport would, and is stricter wherever that costs nothing
// for the answers a Rivet conductor (net/http's server) writes: anything
// it is not sure of is an error and the connection is closed, never
// reused. FuzzLeanResponseMatchesNetHTTP holds it to net/http: whatever
// it accepts, net/http accepts with the same status, body, reuse verdict
// and bytes consumed.

const (
	// leanReadBufferSize is the bufio.Reader of one connection; a status,
	// header, chunk-size or trailer line must fit in it.
	leanReadBufferSize = 16 << 10
	// leanMaxHeaderBytes bounds the status line and headers of one
	// response (1xx ones included); net/http allows 10 MiB, a conductor
	// writes some 100 bytes.
	leanMaxHeaderBytes = 1 << 20
	// leanMax1xx is net/http's limit on interim responses before the final
	// one.
	leanMax1xx = 5
	// leanMaxChunkOverhead is net/http's limit on chunk-size lines,
	// extensions and CRLFs beyond 16 bytes per chunk plus twice its data.
	leanMaxChunkOverhead = 16 << 10
)

// errLeanTooLarge is a body longer than the caller's bound; Send turns it
// into the same error as a reply io.ReadAll found too long.
var errLeanTooLarge = errors.New("reply larger than the limit")

// leanResponse is one parsed final response.
type leanResponse struct {
	status int
	body   []byte // nil when empty
	// reusable says the connection may carry another request: HTTP/1.1,
	// no "Connection: close", and the body was delimited (not read to
	// EOF). Whether the read buffer is empty is the caller's check.
	reusable bool
}

// readLeanResponse reads one response to a POST from br, skipping up to
// leanMax1xx interim (1xx, not 101) responses. A body longer than limit is
// errLeanTooLarge (the connection is then unusable). The body is a fresh
// slice.
func readLeanResponse(br *bufio.Reader, limit int64) (leanResponse, error) {
	budget := leanMaxHeaderBytes
	for n1xx := 0; ; n1xx++ {
		h, err := readLeanHead(br, &budget)
		if err != nil {
			return leanResponse{}, err
		}
		if h.status >= 100 && h.status <= 199 && h.status != 101 {
			if n1xx == leanMax1xx {
				return leanResponse{}, errors.New("too many 1xx informational responses")
			}
			continue
		}
		resp := leanResponse{status: h.status, reusable: !h.http10 && !h.close}
		switch {
		case h.status/100 == 1 || h.status == 204 || h.status == 304:
			// No body, whatever the headers say (101 ends the exchange:
			// Send finds no JSON-RPC in it, and the connection closes).
			if h.status == 101 {
				resp.reusable = false
			}
		case h.chunked:
			resp.body, err = readLeanChunked(br, limit)
		case h.length >= 0:
			if h.length > limit {
				return resp, errLeanTooLarge
			}
			if h.length > 0 {
				resp.body = make([]byte, h.length)
				if _, err = io.ReadFull(br, resp.body); err != nil {
					err = fmt.Errorf("reading a %d-byte body: %w", h.length, unexpectedEOF(err))
				}
			}
		default:
			// Neither: the body runs to the end of the connection.
			resp.reusable = false
			resp.body, err = readLeanToEOF(br, limit)
		}
		return resp, err
	}
}

// leanHead is what framing needs of a status line and headers.
type leanHead struct {
	status  int
	http10  bool
	close   bool  // Connection: close
	chunked bool  // Transfer-Encoding: chunked (HTTP/1.1 only)
	length  int64 // Content-Length, -1 when absent
}

// readLeanHead reads a status line and headers. budget is what the
// response may still spend on them.
func readLeanHead(br *bufio.Reader, budget *int) (leanHead, error) {
	h := leanHead{length: -1}
	line, err := leanLine(br, budget, "status line")
	if err != nil {
		return h, err
	}
	// "HTTP/1.x NNN" then nothing or " reason". net/http also takes
	// other versions, several spaces, a sign; no conductor sends them.
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || (line[7] != '0' && line[7] != '1') || line[8] != ' ' ||
		(len(line) > 12 && line[12] != ' ') {
		return h, fmt.Errorf("malformed HTTP response %.80q", line)
	}
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return h, fmt.Errorf("malformed HTTP status code %.80q", line)
		}
		h.status = h.status*10 + int(c-'0')
	}
	if h.status < 100 || h.status > 599 {
		return h, fmt.Errorf("malformed HTTP status code %.80q", line)
	}
	h.http10 = line[7] == '0'
	var (
		lengthValue []byte // the first Content-Length, trimmed
		te          int    // Transfer-Encoding fields
		teChunked   bool
	)
	for {
		line, err := leanLine(br, budget, "header")
		if err != nil {
			return h, err
		}
		if len(line) == 0 {
			break
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return h, fmt.Errorf("malformed header line %.80q", line)
		}
		name, value := line[:colon], trimOWS(line[colon+1:])
		for _, c := range name {
			if !isTokenByte(c) {
				return h, fmt.Errorf("malformed header line %.80q", line)
			}
		}
		for _, c := range value {
			if (c < ' ' && c != '\t') || c == 0x7f {
				return h, fmt.Errorf("invalid header value %.80q", line)
			}
		}
		switch {
		case asciiEqualFold(name, "Content-Length"):
			if lengthValue != nil {
				// net/http accepts repeats of the same value only.
				if !bytes.Equal(value, lengthValue) {
					return h, fmt.Errorf("message cannot contain multiple Content-Length headers")
				}
				continue
			}
			n, perr := strconv.ParseUint(string(value), 10, 63)
			if perr != nil || len(value) == 0 || value[0] < '0' || value[0] > '9' {
				return h, fmt.Errorf("bad Content-Length %.40q", value)
			}
			lengthValue, h.length = value, int64(n)
		case asciiEqualFold(name, "Transfer-Encoding"):
			te++
			teChunked = asciiEqualFold(value, "chunked")
		case asciiEqualFold(name, "Connection"):
			if headerHasToken(value, "close") {
				h.close = true
			}
		case asciiEqualFold(name, "Trailer"):
			// Trailers net/http would check and merge; no conductor
			// announces any.
			return h, errors.New("responses with a Trailer header are not supported")
		}
	}
	// net/http ignores Transfer-Encoding in HTTP/1.0 and allows one field,
	// "chunked", which then overrides Content-Length.
	if te > 0 && !h.http10 {
		if te > 1 || !teChunked {
			return h, errors.New("unsupported Transfer-Encoding")
		}
		h.chunked = true
		h.length = -1
	}
	return h, nil
}

// leanLine reads one line ending in LF (a CR before it dropped), as
// net/http's textproto does for status and header lines; bytes count
// against budget. The slice is valid until the next read of br.
func leanLine(br *bufio.Reader, budget *int, what string) ([]byte, error) {
	b, err := br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%s longer than %d bytes", what, leanReadBufferSize)
		}
		return nil, fmt.Errorf("reading the %s: %w", what, unexpectedEOF(err))
	}
	if *budget -= len(b); *budget < 0 {
		return nil, fmt.Errorf("response headers longer than %d bytes", leanMaxHeaderBytes)
	}
	b = b[:len(b)-1]
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	// A CR elsewhere, or a line folded onto the one before: net/http has
	// rules for both that no conductor needs.
	if bytes.IndexByte(b, '\r') >= 0 || (len(b) > 0 && (b[0] == ' ' || b[0] == '\t')) {
		return nil, fmt.Errorf("malformed %s %.80q", what, b)
	}
	return b, nil
}

// readLeanChunked reads a chunked body: chunk-size lines in CRLF (net/http
// refuses a bare LF there), extensions ignored, data, CRLF, then the last
// chunk and an empty trailer.
func readLeanChunked(br *bufio.Reader, limit int64) ([]byte, error) {
	var body []byte
	var excess int64
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return nil, errors.New("chunk-size line too long")
			}
			return nil, fmt.Errorf("reading a chunk size: %w", unexpectedEOF(err))
		}
		if len(line) < 2 || line[len(line)-2] != '\r' || bytes.IndexByte(line[:len(line)-2], '\r') >= 0 {
			return nil, errors.New("malformed chunk-size line")
		}
		excess += int64(len(line))
		line = line[:len(line)-2]
		if len(line) >= 4096 { // net/http's maxLineLength
			return nil, errors.New("chunk-size line too long")
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		line = bytes.TrimRight(line, " \t")
		if len(line) == 0 || len(line) > 16 {
			return nil, fmt.Errorf("bad chunk size %.40q", line)
		}
		var size uint64
		for _, c := range line {
			switch {
			case '0' <= c && c <= '9':
				c -= '0'
			case 'a' <= c && c <= 'f':
				c -= 'a' - 10
			case 'A' <= c && c <= 'F':
				c -= 'A' - 10
			default:
				return nil, fmt.Errorf("bad chunk size %.40q", line)
			}
			size = size<<4 | uint64(c)
		}
		excess = max(excess-16-2*int64(min(size, 1<<40)), 0)
		if excess > leanMaxChunkOverhead {
			return nil, errors.New("chunked encoding contains too much non-data")
		}
		if size == 0 {
			// The trailer: none, so the CRLF that ends the body.
			end, err := br.Peek(2)
			if err != nil {
				return nil, fmt.Errorf("reading the end of a chunked body: %w", unexpectedEOF(err))
			}
			if end[0] != '\r' || end[1] != '\n' {
				return nil, errors.New("chunked body with a trailer")
			}
			_, _ = br.Discard(2)
			return body, nil
		}
		if size > uint64(limit-int64(len(body))) {
			return nil, errLeanTooLarge
		}
		start := len(body)
		body = growLen(body, int(size))
		if _, err := io.ReadFull(br, body[start:]); err != nil {
			return nil, fmt.Errorf("reading a %d-byte chunk: %w", size, unexpectedEOF(err))
		}
		crlf, err := br.Peek(2)
		if err != nil {
			return nil, fmt.Errorf("reading a chunk's end: %w", unexpectedEOF(err))
		}
		if crlf[0] != '\r' || crlf[1] != '\n' {
			return nil, errors.New("malformed chunked encoding")
		}
		_, _ = br.Discard(2)
	}
}

// readLeanToEOF reads a body delimited by the end of the connection.
func readLeanToEOF(br *bufio.Reader, limit int64) ([]byte, error) {
	var body []byte
	for {
		if int64(len(body)) > limit {
			return nil, errLeanTooLarge
		}
		if len(body) == cap(body) {
			body = append(body, 0)[:len(body)]
		}
		n, err := br.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if err == io.EOF {
			if int64(len(body)) > limit {
				return nil, errLeanTooLarge
			}
			if len(body) == 0 {
				return nil, nil
			}
			return body, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading a body up to the connection's end: %w", err)
		}
	}
}

// growLen extends b by n bytes, reallocating when needed.
func growLen(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		grown := make([]byte, len(b), max(len(b)+n, 2*cap(b)))
		copy(grown, b)
		b = grown
	}
	return b[:len(b)+n]
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// trimOWS trims spaces and tabs.
func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// headerHasToken reports whether the comma-separated value holds token,
// ignoring ASCII case.
func headerHasToken(value []byte, token string) bool {
	for len(value) > 0 {
		var part []byte
		part, value, _ = bytes.Cut(value, []byte{','})
		if asciiEqualFold(trimOWS(part), token) {
			return true
		}
	}
	return false
}

// isTokenByte is RFC 9110's tchar.
func isTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c < 0x80 && bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0
}

// asciiEqualFold compares b with s ignoring ASCII case.
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
