package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rivetmetal/rivet/core/version"
)

// maxBody bounds what the client reads of one answer.
const maxBody = 64 << 20

// Client talks to one Ironic v1 endpoint. It is safe for concurrent use;
// the negotiated version is shared by all calls.
type Client struct {
	endpoint string
	http     *http.Client
	user     string
	password string
	agent    string
	log      *slog.Logger
	cache    VersionCache
	retries  int
	pause    time.Duration

	// clientMin and clientMax are MinVersion and MaxVersion; tests narrow
	// them to replay the spec's examples.
	clientMin, clientMax version.Version

	mu sync.Mutex
	st negotiation
}

// New returns a client for opts. It validates the URL but makes no request.
func New(opts Options) (*Client, error) {
	ep, err := Endpoint(opts.URL)
	if err != nil {
		return nil, err
	}
	hc := opts.HTTPClient
	if hc == nil {
		t := opts.Timeout
		if t <= 0 {
			t = DefaultTimeout
		}
		hc = &http.Client{Timeout: t}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	agent := opts.UserAgent
	if agent == "" {
		agent = "rivet-client"
	}
	pause := opts.RetryInterval
	if pause <= 0 {
		pause = DefaultRetryInterval
	}
	c := &Client{endpoint: ep, http: hc, user: opts.Username, password: opts.Password, agent: agent,
		log: log, cache: opts.Cache, retries: max(opts.Retries, 0), pause: pause, clientMin: MinVersion, clientMax: MaxVersion}
	c.st.start(opts.Version, c)
	return c, nil
}

// Endpoint returns the /v1 endpoint the client talks to.
func (c *Client) Endpoint() string { return c.endpoint }

// response is one HTTP answer, read in full.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends one API request with the negotiated version and handles 406 and
// version headers as seeds/002_… says. pathQuery is relative to the
// endpoint ("/nodes?limit=2"). body, if not nil, is sent as JSON. A status
// outside ok is an *APIError; out, if not nil, receives the decoded JSON.
func (c *Client) do(ctx context.Context, method, pathQuery string, body, out any, ok ...int) (*response, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("%s %s: encode body: %w", method, pathQuery, err)
		}
	}
	if method != http.MethodGet {
		// A version the user gave is checked before anything changes on
		// the server: an old server would otherwise act on a request at
		// 1.0 semantics before the client could notice (use case 3B).
		if err := c.probeIfUnconfirmed(ctx); err != nil {
			return nil, err
		}
	}
	negotiated, retried := false, 0
	for {
		sent := c.versionHeader()
		resp, err := c.send(ctx, method, pathQuery, payload, sent)
		if err != nil {
			return nil, err
		}
		if resp.status == http.StatusNotAcceptable {
			retry, verr := c.on406(resp.header, sent, !negotiated)
			if verr != nil {
				return nil, verr
			}
			if retry {
				negotiated = true
				continue
			}
		}
		if verr := c.observe(resp.header, sent, resp.status); verr != nil {
			return nil, verr
		}
		if retried < c.retries && retryable(resp) {
			retried++
			c.log.Debug("api asked to retry", "method", method, "path", pathQuery, "status", resp.status, "attempt", retried)
			if err := sleep(ctx, c.pause); err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, pathQuery, err)
			}
			continue
		}
		if !slices.Contains(ok, resp.status) {
			return nil, c.apiError(method, pathQuery, resp)
		}
		if out != nil && len(bytes.TrimSpace(resp.body)) > 0 {
			dec := json.NewDecoder(bytes.NewReader(resp.body))
			dec.UseNumber()
			if err := dec.Decode(out); err != nil {
				return nil, fmt.Errorf("%s %s: decode answer: %w", method, pathQuery, err)
			}
		}
		return resp, nil
	}
}

// send performs one HTTP exchange and logs it at debug.
func (c *Client) send(ctx context.Context, method, pathQuery string, payload []byte, ver string) (*response, error) {
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint+pathQuery, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, pathQuery, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.agent)
	req.Header.Set(HeaderVersion, ver)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.user != "" || c.password != "" {
		req.SetBasicAuth(c.user, c.password)
	}
	start := time.Now()
	hr, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: %w", method, pathQuery, ctx.Err())
		}
		return nil, &ConnectError{Endpoint: c.endpoint, Err: err}
	}
	defer hr.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hr.Body, maxBody))
	if err != nil {
		return nil, &ConnectError{Endpoint: c.endpoint, Err: err}
	}
	c.log.LogAttrs(ctx, slog.LevelDebug, "api request",
		slog.String("method", method), slog.String("path", pathQuery), slog.Int("status", hr.StatusCode),
		slog.String("version_sent", ver), slog.String("version_served", hr.Header.Get(HeaderVersion)),
		slog.String("request_id", requestID(hr.Header)), slog.Duration("took", time.Since(start)))
	return &response{status: hr.StatusCode, header: hr.Header, body: data}, nil
}

// requestID returns the server's request id header, old or new spelling.
func requestID(h http.Header) string {
	if id := h.Get("Openstack-Request-Id"); id != "" {
		return id
	}
	return h.Get("X-Openstack-Request-Id")
}

func (c *Client) apiError(method, pathQuery string, resp *response) *APIError {
	return &APIError{Method: method, Path: "/v1" + pathQuery, Status: resp.status,
		Message: ParseErrorBody(resp.body), RequestID: requestID(resp.header), Version: resp.header.Get(HeaderVersion)}
}

// retryable is an answer that says "try again": 503, or 409 for a node
// another conductor holds (NodeLocked), not a 409 for a wrong state.
func retryable(r *response) bool {
	if r.status == http.StatusServiceUnavailable {
		return true
	}
	return r.status == http.StatusConflict && strings.Contains(strings.ToLower(ParseErrorBody(r.body)), "locked")
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
