package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// requestTimeout bounds one request (http.Client.Timeout).
const requestTimeout = time.Minute

// Enroll and the read workloads send one request after another from each
// worker, through the client's one net/http transport (keep-alive, up to
// 256 idle connections to the API, so every worker finds one). What a
// request costs the bench beyond net/http itself is kept out of the loop:
// the header map is built once and shared (net/http only reads it), the
// response body goes into a buffer each worker reuses, enroll's POST body
// is the template marshalled once with the node's name spliced in
// (nodeBody), and only the created node's uuid is read from the reply
// (createdUUID). A GET that meets a keep-alive connection the server has
// just closed is sent again by net/http; a POST never is (the server may
// have acted on it): it counts as an error.

// getter sends the requests of one worker of enroll or a read workload.
// get and post return the body of a response whose status is want; the
// body is valid until the next call. A getter belongs to one goroutine.
type getter struct {
	c    *client
	body bytes.Buffer
}

// newGetter returns the getter of one worker.
func (c *client) newGetter() *getter { return &getter{c: c} }

func (g *getter) get(ctx context.Context, path string, want int) ([]byte, error) {
	return g.send(ctx, http.MethodGet, path, nil, want)
}

// post sends body, JSON, which must not change until post returns.
func (g *getter) post(ctx context.Context, path string, body []byte, want int) ([]byte, error) {
	return g.send(ctx, http.MethodPost, path, body, want)
}

// close releases nothing: the connections belong to the client's
// transport. It is there for parallelEach.
func (g *getter) close() {}

func (g *getter) send(ctx context.Context, method, path string, body []byte, want int) ([]byte, error) {
	var rd io.Reader
	header := g.c.getHeader
	if body != nil {
		rd = bytes.NewReader(body)
		header = g.c.postHeader
	}
	req, err := http.NewRequestWithContext(ctx, method, g.c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header = header
	resp, err := g.c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	g.body.Reset()
	if _, err := g.body.ReadFrom(resp.Body); err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: HTTP %d (want %d): %.300s", method, path, resp.StatusCode, want, g.body.Bytes())
	}
	return g.body.Bytes(), nil
}
