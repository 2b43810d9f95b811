package upgrade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The client's retry policy is python-ironicclient's (with_retries: 409
// Conflict and 503, DEFAULT_MAX_RETRIES = 5 times, DEFAULT_RETRY_INTERVAL =
// 2 s apart), narrowed to the 409 that means "retry": NodeLocked. A request
// still failing after the retries, a 5xx, an unexpected status or a broken
// connection is a failure.
const (
	maxRetries = 5
	retryPause = 2 * time.Second
)

// errFailed marks a request already recorded as a failure.
var errFailed = errors.New("request failed")

// client talks to the REST API (through HAProxy) at a fixed microversion,
// as an Ironic client pinned to a version does.
type client struct {
	base    string
	version string
	// newest, when set, replaces version: the load moves to the newest
	// microversion once the APIs are unpinned. Copies share it.
	newest *atomic.Value
	http   *http.Client
	rec    *recorder
	pause  time.Duration // between retries
}

// faultRetries is the retry budget while a fault is injected (a conductor
// killed, the database restarted): python-ironicclient's retries are
// configurable, and a client that must ride out a restart raises them.
// Reads are also retried after a broken connection (they are idempotent);
// writes are not: a write that fails is "not acknowledged", never resent
// blindly.
const faultRetries = 40

// ver is the microversion the client sends now.
func (c *client) ver() string {
	if c.newest != nil {
		if v, _ := c.newest.Load().(string); v != "" {
			return v
		}
	}
	return c.version
}

// useVersion moves the client (and its copies) to microversion v.
func (c *client) useVersion(v string) { c.newest.Store(v) }

func newClient(base, version string, rec *recorder) *client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &client{base: base, version: version, newest: &atomic.Value{}, rec: rec, pause: retryPause,
		http: &http.Client{Transport: tr, Timeout: 90 * time.Second}}
}

// retryable reports whether python-ironicclient would retry the answer.
func retryable(status int, body []byte) bool {
	return status == http.StatusServiceUnavailable ||
		(status == http.StatusConflict && bytes.Contains(body, []byte("is locked by host")))
}

// call sends one request, retrying as the policy says, and records it in
// the current step. The status must be one of want; the reply is decoded
// into out when out is not nil.
func (c *client) call(ctx context.Context, method, path string, body any, out any, want ...int) (int, error) {
	st := c.rec.step()
	fault := c.rec.inFault()
	start := time.Now()
	var (
		data   []byte
		status int
		err    error
		// resent: a write answered 503 was sent again. The API answers
		// 503 for a call cut in flight too (the conductor killed after
		// acting on it), so the resent write may find its work done.
		resent bool
	)
	for attempt := 0; ; attempt++ {
		data, status, err = c.once(ctx, method, path, body)
		budget := maxRetries
		if fault || c.rec.inFault() {
			budget = faultRetries
		}
		again := err == nil && retryable(status, data) ||
			err != nil && ctx.Err() == nil && method == http.MethodGet && budget == faultRetries
		if !again || attempt >= budget {
			break
		}
		resent = resent || method != http.MethodGet && status == http.StatusServiceUnavailable
		c.rec.retried(st)
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(c.pause):
		}
	}
	took := time.Since(start)
	var failure string
	switch {
	case err != nil:
		failure = fmt.Sprintf("%s %s: %v", method, path, err)
	case !contains(want, status):
		failure = fmt.Sprintf("%s %s: HTTP %d (want %v): %.300s", method, path, status, want, data)
	case out != nil && len(data) > 0:
		if jerr := json.Unmarshal(data, out); jerr != nil {
			failure = fmt.Sprintf("%s %s: decode: %v: %.200s", method, path, jerr, data)
		}
	}
	c.rec.kindDone(kindOf(method, path), failure != "")
	inFault := fault || c.rec.inFault()
	if inFault && failure != "" && method != http.MethodGet && status == http.StatusInternalServerError && c.rec.cutCalls() {
		// A write in flight on a conductor killed at that instant: its
		// outcome is unknown, the API says 500. The fault decides later,
		// from the APIs' logs, whether the call was cut (explained) or
		// merely refused (an error: the API knew nothing was done).
		c.rec.suspect(st, took, failure)
	} else {
		c.rec.doneIn(st, took, failure, inFault && (explained(method, status, err) || resent && conflict(status)))
	}
	if failure != "" {
		return status, fmt.Errorf("%w: %s", errFailed, failure)
	}
	return status, nil
}

func (c *client) once(ctx context.Context, method, path string, body any) ([]byte, int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", c.ver())
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "rivet-upgrade-test")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return data, resp.StatusCode, err
}

// explained reports whether a request that failed while a fault was
// injected failed the way the fault explains: a write not acknowledged
// (503 "retry later" after the retries, or a connection broken by the
// fault). A 500, a 4xx or a failed read is never explained.
func explained(method string, status int, err error) bool {
	if method == http.MethodGet {
		return false
	}
	return err != nil || status == http.StatusServiceUnavailable
}

// conflict reports whether a resent write's answer may mean that its
// first send was acted on: the port exists already (409), the node moved
// on from the state the request needs (400, 409).
func conflict(status int) bool {
	return status == http.StatusConflict || status == http.StatusBadRequest
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// apiNode is the part of a node the workers read.
type apiNode struct {
	UUID                 string         `json:"uuid"`
	Name                 string         `json:"name"`
	PowerState           *string        `json:"power_state"`
	TargetPowerState     *string        `json:"target_power_state"`
	ProvisionState       string         `json:"provision_state"`
	TargetProvisionState *string        `json:"target_provision_state"`
	LastError            *string        `json:"last_error"`
	Reservation          *string        `json:"reservation"`
	Extra                map[string]any `json:"extra"`
}

// The retry policy, against a server answering NodeLocked twice, then 200;
// then one that never stops answering 503, and one answering a 409 that is
// not NodeLocked.
func TestClientRetries(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		switch {
		case strings.HasSuffix(r.URL.Path, "/locked") && n <= 2:
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"error_message": "{\"faultstring\": \"Node n1 is locked by host c1, please retry after the current operation is completed.\"}"}`)
		case strings.HasSuffix(r.URL.Path, "/unavailable"):
			w.WriteHeader(http.StatusServiceUnavailable)
		case strings.HasSuffix(r.URL.Path, "/conflict"):
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"error_message": "{\"faultstring\": \"A port with MAC address 52:54:00:00:00:01 already exists.\"}"}`)
		default:
			io.WriteString(w, `{"uuid": "n1"}`)
		}
	}))
	defer srv.Close()
	var rec recorder
	rec.begin("test")
	c := newClient(srv.URL, "1.26", &rec)
	c.pause = time.Millisecond
	ctx := context.Background()

	var n apiNode
	if _, err := c.call(ctx, http.MethodGet, "/locked", nil, &n, http.StatusOK); err != nil || n.UUID != "n1" {
		t.Fatalf("NodeLocked twice then 200: %v, node %+v", err, n)
	}
	if req, ret, errs := rec.totals(); req != 1 || ret != 2 || errs != 0 {
		t.Fatalf("after NodeLocked ×2: %d requests, %d retries, %d errors; want 1, 2, 0", req, ret, errs)
	}
	calls.Store(0)
	if _, err := c.call(ctx, http.MethodGet, "/unavailable", nil, nil, http.StatusOK); !errors.Is(err, errFailed) {
		t.Fatalf("503 forever: %v, want a failure", err)
	}
	if got := calls.Load(); got != maxRetries+1 {
		t.Fatalf("503 forever: %d attempts, want %d", got, maxRetries+1)
	}
	calls.Store(0)
	if _, err := c.call(ctx, http.MethodGet, "/conflict", nil, nil, http.StatusOK); !errors.Is(err, errFailed) || calls.Load() != 1 {
		t.Fatalf("a 409 that is not NodeLocked: %v after %d attempts, want a failure after 1", err, calls.Load())
	}
	if req, ret, errs := rec.totals(); req != 3 || ret != 2+maxRetries || errs != 2 {
		t.Fatalf("totals: %d requests, %d retries, %d errors; want 3, %d, 2", req, ret, errs, 2+maxRetries)
	}
}

// During a fault, a write answered 503, resent, then refused as a conflict
// (its first send was acted on) is unacknowledged; outside a fault it is
// an error; a read is never explained.
func TestClientResentWriteConflict(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1)%2 == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusConflict)
		io.WriteString(w, `{"error_message": "{\"faultstring\": \"A port with MAC address 52:54:00:00:00:01 already exists.\"}"}`)
	}))
	defer srv.Close()
	var rec recorder
	rec.begin("test")
	c := newClient(srv.URL, "1.31", &rec)
	c.pause = time.Millisecond
	ctx := context.Background()
	if _, err := c.call(ctx, http.MethodPost, "/v1/ports", map[string]any{}, nil, http.StatusCreated); !errors.Is(err, errFailed) {
		t.Fatalf("outside a fault: %v, want a failure", err)
	}
	rec.faultBegins("conductor killed")
	if _, err := c.call(ctx, http.MethodPost, "/v1/ports", map[string]any{}, nil, http.StatusCreated); !errors.Is(err, errFailed) {
		t.Fatalf("during a fault: %v, want a failure", err)
	}
	if _, err := c.call(ctx, http.MethodGet, "/v1/ports", nil, nil, http.StatusOK); !errors.Is(err, errFailed) {
		t.Fatalf("a read during a fault: %v, want a failure", err)
	}
	rec.faultEnds()
	if req, _, errs := rec.totals(); req != 3 || errs != 2 || len(rec.explained) != 1 {
		t.Fatalf("%d requests, %d errors, %d unacknowledged; want 3, 2 (outside the fault, the read), 1", req, errs, len(rec.explained))
	}
}
