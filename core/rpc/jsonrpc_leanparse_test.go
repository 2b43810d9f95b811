package rpc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// leanParseCase is one response on the wire and what readLeanResponse
// must make of it.
type leanParseCase struct {
	name     string
	raw      string
	limit    int64
	status   int
	body     string
	reusable bool
	err      string // substring; "" for success
	rest     string // what must stay unread
}

func leanParseCases() []leanParseCase {
	return []leanParseCase{
		{name: "content-length", raw: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nhello",
			status: 200, body: "hello", reusable: true},
		{name: "content-length, next response follows", raw: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP/1.1 200 OK\r\n",
			status: 200, body: "hi", reusable: true, rest: "HTTP/1.1 200 OK\r\n"},
		{name: "no reason phrase", raw: "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", status: 200, reusable: true},
		{name: "bare LF lines", raw: "HTTP/1.1 200 OK\nContent-Length: 2\n\nhi", status: 200, body: "hi", reusable: true},
		{name: "chunked", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n",
			status: 200, body: "hello world", reusable: true},
		{name: "chunked overrides content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
			status: 200, body: "hi", reusable: true},
		{name: "chunk size upper case hex and spaces", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nA \r\n0123456789\r\n0\r\n\r\n",
			status: 200, body: "0123456789", reusable: true},
		{name: "connection close", raw: "HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 2\r\n\r\nhi",
			status: 200, body: "hi"},
		{name: "HTTP/1.0", raw: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi", status: 200, body: "hi"},
		{name: "HTTP/1.0 ignores transfer-encoding", raw: "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi",
			status: 200, body: "2\r\nhi"},
		{name: "body to EOF", raw: "HTTP/1.1 200 OK\r\n\r\nuntil the end", status: 200, body: "until the end"},
		{name: "100 continue skipped", raw: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
			status: 200, body: "hi", reusable: true},
		{name: "too many 1xx", raw: strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 6) + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
			err: "too many 1xx"},
		{name: "204 ignores content-length", raw: "HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n", status: 204, reusable: true},
		{name: "101 ends the exchange", raw: "HTTP/1.1 101 Switching Protocols\r\n\r\nstuff", status: 101, rest: "stuff"},
		{name: "500 with body", raw: "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops", status: 500, body: "oops", reusable: true},
		{name: "repeated equal content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length:  2 \r\n\r\nhi",
			status: 200, body: "hi", reusable: true},
		{name: "conflicting content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nhi!", err: "multiple Content-Length"},
		{name: "signed content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nhi", err: "bad Content-Length"},
		{name: "empty content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\nhi", err: "bad Content-Length"},
		{name: "short body", raw: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhi", err: "unexpected EOF"},
		{name: "gzip transfer-encoding", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", err: "unsupported Transfer-Encoding"},
		{name: "two transfer-encodings", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
			err: "unsupported Transfer-Encoding"},
		{name: "chunk size bare LF", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nhi\r\n0\r\n\r\n", err: "chunk-size line"},
		{name: "chunk without CRLF", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhiX\r\n0\r\n\r\n", err: "malformed chunked"},
		{name: "bad chunk size", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhi\r\n0\r\n\r\n", err: "bad chunk size"},
		{name: "truncated chunked", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", err: "unexpected EOF"},
		{name: "chunked trailer", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\r\n\r\n", err: "trailer"},
		{name: "trailer header", raw: "HTTP/1.1 200 OK\r\nTrailer: X-T\r\nContent-Length: 0\r\n\r\n", err: "Trailer"},
		{name: "HTTP/2 status line", raw: "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n", err: "malformed HTTP response"},
		{name: "two-digit status", raw: "HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n", err: "malformed HTTP response"},
		{name: "folded header", raw: "HTTP/1.1 200 OK\r\nX-A: 1\r\n  2\r\nContent-Length: 0\r\n\r\n", err: "malformed header"},
		{name: "space before colon", raw: "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n", err: "malformed header"},
		{name: "control byte in value", raw: "HTTP/1.1 200 OK\r\nX-A: a\x01b\r\nContent-Length: 0\r\n\r\n", err: "invalid header value"},
		{name: "empty input", raw: "", err: "unexpected EOF"},
		{name: "oversize content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world", limit: 10, err: errLeanTooLarge.Error()},
		{name: "content-length at the limit", raw: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", limit: 10,
			status: 200, body: "0123456789", reusable: true},
		{name: "oversize chunked", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n", limit: 10,
			err: errLeanTooLarge.Error()},
		{name: "oversize to EOF", raw: "HTTP/1.1 200 OK\r\n\r\nhello world", limit: 10, err: errLeanTooLarge.Error()},
		{name: "huge chunk size", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n", err: errLeanTooLarge.Error()},
		{name: "status line too long", raw: "HTTP/1.1 200 " + strings.Repeat("x", leanReadBufferSize) + "\r\n\r\n", err: "longer than"},
	}
}

func TestReadLeanResponse(t *testing.T) {
	for _, tc := range leanParseCases() {
		t.Run(tc.name, func(t *testing.T) {
			limit := tc.limit
			if limit == 0 {
				limit = 1 << 20
			}
			br := bufio.NewReaderSize(strings.NewReader(tc.raw), leanReadBufferSize)
			resp, err := readLeanResponse(br, limit)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if resp.status != tc.status || string(resp.body) != tc.body || resp.reusable != tc.reusable {
				t.Errorf("got %d %q reusable=%v, want %d %q reusable=%v", resp.status, resp.body, resp.reusable, tc.status, tc.body, tc.reusable)
			}
			rest, _ := io.ReadAll(br)
			if string(rest) != tc.rest {
				t.Errorf("left %q unread, want %q", rest, tc.rest)
			}
			// Every case the parser accepts, net/http accepts alike.
			checkLeanMatchesNetHTTP(t, []byte(tc.raw), limit)
		})
	}
}

// netHTTPResponse reads raw as net/http's client would (http.ReadResponse
// for a POST, skipping up to five 1xx responses but 101 as its Transport
// does, then the body up to limit+1 bytes as Send does): status, body,
// whether it would reuse the connection, and the bytes left.
func netHTTPResponse(raw []byte, limit int64) (status int, body []byte, reusable bool, rest []byte, err error) {
	br := bufio.NewReader(bytes.NewReader(raw))
	req, _ := http.NewRequest(http.MethodPost, "http://conductor:8089/", nil)
	var resp *http.Response
	for n1xx := 0; ; n1xx++ {
		resp, err = http.ReadResponse(br, req)
		if err != nil {
			return 0, nil, false, nil, err
		}
		if resp.StatusCode >= 100 && resp.StatusCode <= 199 && resp.StatusCode != 101 {
			if n1xx == 5 {
				return 0, nil, false, nil, errors.New("too many 1xx")
			}
			continue
		}
		break
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return 0, nil, false, nil, err
	}
	if int64(len(body)) > limit {
		return 0, nil, false, nil, errLeanTooLarge
	}
	rest, _ = io.ReadAll(br)
	return resp.StatusCode, body, !resp.Close, rest, nil
}

// checkLeanMatchesNetHTTP fails when readLeanResponse accepts raw and
// net/http does not, or reads it differently: another status or body, a
// connection it would reuse that net/http would not, other bytes left
// for the next response. The lean parser may refuse what net/http takes
// (it is stricter), and may close a connection net/http would keep.
func checkLeanMatchesNetHTTP(t *testing.T, raw []byte, limit int64) {
	t.Helper()
	br := bufio.NewReaderSize(bytes.NewReader(raw), leanReadBufferSize)
	resp, err := readLeanResponse(br, limit)
	status, body, reusable, rest, nerr := netHTTPResponse(raw, limit)
	if err != nil {
		// Refusing is always allowed, but "too large" only for a body
		// net/http does not read whole within the limit either.
		if errors.Is(err, errLeanTooLarge) && nerr == nil {
			t.Fatalf("%q: lean %v, net/http read %d bytes within %d", raw, err, len(body), limit)
		}
		return
	}
	if nerr != nil {
		t.Fatalf("%q: lean accepted (%d %q), net/http refused: %v", raw, resp.status, resp.body, nerr)
	}
	if resp.status != status || !bytes.Equal(resp.body, body) {
		t.Fatalf("%q: lean %d %q, net/http %d %q", raw, resp.status, resp.body, status, body)
	}
	if resp.reusable && !reusable {
		t.Fatalf("%q: lean would reuse the connection, net/http would not", raw)
	}
	if resp.reusable {
		leanRest, _ := io.ReadAll(br)
		if !bytes.Equal(leanRest, rest) {
			t.Fatalf("%q: lean left %q, net/http %q", raw, leanRest, rest)
		}
	}
}

// FuzzLeanResponseMatchesNetHTTP holds the lean client's response parser
// to net/http's: whatever it accepts (any bytes, any body limit), net/http
// reads the same status and body from, and a connection it would reuse
// net/http would too, with the same bytes left over.
func FuzzLeanResponseMatchesNetHTTP(f *testing.F) {
	for _, tc := range leanParseCases() {
		f.Add([]byte(tc.raw), uint16(tc.limit))
	}
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: Sun, 22 Nov 2026 18:00:00 GMT\r\nContent-Length: 41\r\n\r\n{\"jsonrpc\":\"2.0\",\"result\":\"ok\",\"id\":\"r\"}\n"), uint16(0))
	f.Fuzz(func(t *testing.T, raw []byte, limit uint16) {
		l := int64(limit)
		if l == 0 {
			l = 1 << 20
		}
		checkLeanMatchesNetHTTP(t, raw, l)
	})
}
