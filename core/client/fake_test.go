package client

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/rivetmetal/rivet/core/version"
)

// fakeIronic mimics an Ironic API's version handling: an old Ironic (no
// range: no version headers at all) or a new one serving [min, max], with
// 406 bodies in Ironic's shape. It records every request.
type fakeIronic struct {
	min, max string // empty: a server that predates microversions
	routes   http.Handler

	mu       sync.Mutex
	versions []string // X-OpenStack-Ironic-API-Version of each request
	calls    []string // "METHOD /path?query" of each request
	bodies   []string
}

// maxV is the client's highest microversion, which a fake serving up to
// it accepts at once.
var maxV = MaxVersion.String()

func newFake(t *testing.T, min, max string, routes http.Handler) (*fakeIronic, *httptest.Server) {
	t.Helper()
	f := &fakeIronic{min: min, max: max, routes: routes}
	if f.routes == nil {
		f.routes = defaultRoutes()
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeIronic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body strings.Builder
	if r.Body != nil {
		b := make([]byte, 4096)
		n, _ := r.Body.Read(b)
		body.Write(b[:n])
	}
	hdr := r.Header.Get(HeaderVersion)
	f.mu.Lock()
	f.versions = append(f.versions, hdr)
	call := r.Method + " " + r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		call += "?" + r.URL.RawQuery
	}
	f.calls = append(f.calls, call)
	f.bodies = append(f.bodies, body.String())
	f.mu.Unlock()
	w.Header().Set("Openstack-Request-Id", "req-fake")
	if f.min == "" {
		f.routes.ServeHTTP(w, r)
		return
	}
	lo, hi := version.MustParse(f.min), version.MustParse(f.max)
	eff := lo
	switch {
	case hdr == "":
	case strings.EqualFold(hdr, "latest"):
		eff = hi
	default:
		v, err := version.Parse(hdr)
		if err != nil {
			writeError(w, http.StatusNotAcceptable, "description", "Invalid value for X-OpenStack-Ironic-API-Version header")
			return
		}
		w.Header().Set(HeaderMinVersion, f.min)
		w.Header().Set(HeaderMaxVersion, f.max)
		if v.Less(lo) || hi.Less(v) {
			writeError(w, http.StatusNotAcceptable, "description", "Version "+hdr+" was requested but the minor version is not supported by this service. The supported version range is: ["+f.min+", "+f.max+"].")
			return
		}
		eff = v
	}
	w.Header().Set(HeaderMinVersion, f.min)
	w.Header().Set(HeaderMaxVersion, f.max)
	w.Header().Set(HeaderVersion, eff.String())
	f.routes.ServeHTTP(w, r)
}

func (f *fakeIronic) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.versions...)
}

func (f *fakeIronic) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// writeError writes Ironic's double-encoded error body with the message
// under key ("faultstring" or "description").
func writeError(w http.ResponseWriter, status int, key, msg string) {
	inner, _ := json.Marshal(map[string]any{key: msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error_message": string(inner)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// defaultRoutes serve the /v1 document, two nodes and 202 state changes.
func defaultRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]any{"id": "v1"}) })
	mux.HandleFunc("GET /v1/nodes", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"nodes": []any{
			map[string]any{"uuid": "u-1", "name": "n1", "provision_state": "available"},
			map[string]any{"uuid": "u-2", "name": "n2", "provision_state": "active"},
		}})
	})
	mux.HandleFunc("GET /v1/nodes/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "n1" {
			writeError(w, 404, "faultstring", "Node "+r.PathValue("id")+" could not be found.")
			return
		}
		writeJSON(w, 200, map[string]any{"uuid": "u-1", "name": "n1", "memory_mb": 4096, "future_field": "kept"})
	})
	mux.HandleFunc("PUT /v1/nodes/{id}/states/{what}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(202) })
	return mux
}

func newTestClient(t *testing.T, url string, req Request, cache VersionCache) *Client {
	t.Helper()
	c, err := New(Options{URL: url, Version: req, Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func http406Routes() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotAcceptable, "faultstring", "Request not acceptable.")
	})
}

func newRawServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// recordAll answers every request with the status Ironic gives for it.
func recordAll() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPatch:
			writeJSON(w, 200, map[string]any{"uuid": "u-1"})
		case r.Method == http.MethodDelete && !strings.HasSuffix(r.URL.Path, "/maintenance"):
			w.WriteHeader(204)
		case strings.HasSuffix(r.URL.Path, "/boot_device"):
			w.WriteHeader(204)
		default:
			w.WriteHeader(202)
		}
	})
}
