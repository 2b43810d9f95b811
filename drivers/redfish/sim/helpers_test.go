package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock drives power settling and session expiry without sleeping.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// rig is a simulator behind an httptest server plus a small raw client.
type rig struct {
	t    *testing.T
	sim  *Simulator
	base string
	hc   *http.Client
}

func newRig(t *testing.T, o Options) *rig {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		_ = s.Close()
		srv.Close()
	})
	return &rig{t: t, sim: s, base: srv.URL, hc: srv.Client()}
}

// resp is one answer, decoded when it is JSON.
type resp struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// auth is how a request authenticates.
type auth struct {
	user, pass string // basic auth when user != ""
	token      string // X-Auth-Token when != ""
}

var admin = auth{user: DefaultUsername, pass: DefaultPassword}

// do sends one request; body is JSON-encoded unless it is a string.
func (g *rig) do(method, path string, a auth, body any, headers ...string) resp {
	g.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			g.t.Fatal(err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, g.base+path, rd)
	if err != nil {
		g.t.Fatal(err)
	}
	if a.user != "" {
		req.SetBasicAuth(a.user, a.pass)
	}
	if a.token != "" {
		req.Header.Set("X-Auth-Token", a.token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := g.hc.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		g.t.Fatal(err)
	}
	out := resp{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			g.t.Fatalf("%s %s: body is not a JSON object: %v: %s", method, path, err, raw)
		}
	}
	return out
}

func (g *rig) get(path string) resp { g.t.Helper(); return g.do(http.MethodGet, path, admin, nil) }

// want checks the status and, for errors, the Redfish error shape and the
// MessageId of the first extended info.
func (r resp) want(t *testing.T, status int, messageID string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	if status < 400 {
		return
	}
	var e struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Info    []struct {
				MessageID string `json:"MessageId"`
				Message   string
			} `json:"@Message.ExtendedInfo"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.raw, &e); err != nil || e.Error == nil {
		t.Fatalf("not a Redfish error body: %s", r.raw)
	}
	if e.Error.Code != "Base.1.8.GeneralError" || e.Error.Message == "" || len(e.Error.Info) == 0 {
		t.Fatalf("error body lacks code, message or extended info: %s", r.raw)
	}
	if got := e.Error.Info[0].MessageID; got != "Base.1.8."+messageID || e.Error.Info[0].Message == "" {
		t.Fatalf("MessageId %q, want Base.1.8.%s: %s", got, messageID, r.raw)
	}
}

// str digs a string out of a decoded body by a path of keys.
func str(m map[string]any, keys ...string) string {
	var v any = m
	for _, k := range keys {
		mm, _ := v.(map[string]any)
		v = mm[k]
	}
	s, _ := v.(string)
	return s
}
