package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// env is one API over a private SQLite database and a fake conductor.
type env struct {
	t      testing.TB
	h      http.Handler
	store  *db.Store
	cond   *fakeConductor
	pinner *release.Pinner
}

type envOption func(*Deps)

// withMaxAPI serves microversions up to ver ("1.99") while unpinned, above
// the release table's HEAD: for testing a version that is implemented
// before every version below it is, so not yet advertised.
func withMaxAPI(ver string) envOption {
	return func(d *Deps) { d.testMaxAPI = version.MustParse(ver) }
}

func newEnv(t testing.TB, opts ...envOption) *env {
	t.Helper()
	return newEnvPinned(t, release.NewPinner(release.Default(), release.Pin{}), opts...)
}

func newEnvPinned(t testing.TB, pinner *release.Pinner, opts ...envOption) *env {
	t.Helper()
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		t.Fatal(err)
	}
	store := db.NewStore(dbtest.Open(t, db.SQLite), reg, pinner)
	registerConductors(t, store.DB())
	cond := newFakeConductor(store)
	d := Deps{Store: store, Conductor: cond, Pinner: pinner, MaxLimit: 1000, Metrics: prometheus.NewRegistry(),
		Links: Links{PublicEndpoint: "http://rivet.test"},
		Conductors: func(context.Context) ([]rpc.ConductorInfo, error) {
			return []rpc.ConductorInfo{{Hostname: "cond-b", HardwareTypes: []string{"fake-hardware"}},
				{Hostname: "cond-a", HardwareTypes: []string{"fake-hardware", "ipmi"}}}, nil
		}}
	for _, o := range opts {
		o(&d)
	}
	h, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, h: h, store: store, cond: cond, pinner: pinner}
}

// registerConductors records the conductors the env's lister names, with
// the hardware interfaces their catalogs offer: cond-a serves fake-hardware
// and ipmi with a boot server, cond-b fake-hardware.
func registerConductors(t testing.TB, dbh *db.DB) {
	t.Helper()
	fakeHW := catalog.Served{HardwareType: "fake-hardware", Interfaces: []string{"power", "management", "deploy", "inspect"}}
	ipmi := catalog.Served{HardwareType: "ipmi", Interfaces: []string{"power", "management", "deploy"}}
	for host, cat := range map[string]*catalog.Catalog{
		"cond-a": catalog.ForConductor([]catalog.Served{fakeHW, ipmi}, catalog.Options{BootServer: true}),
		"cond-b": catalog.ForConductor([]catalog.Served{fakeHW}, catalog.Options{}),
	} {
		_, err := dbh.RegisterConductor(context.Background(), db.ConductorRegistration{Hostname: host,
			Drivers: cat.HardwareTypes(), Version: "1.0", Interfaces: catalog.Rows(cat)})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// resp is a recorded response.
type resp struct {
	Code   int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value.
func (r resp) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body %q: %v", r.Body, err)
	}
	return m
}

// Fault returns the faultstring (or description) of an Ironic error body.
func (r resp) Fault(t testing.TB) string {
	t.Helper()
	var outer map[string]string
	if err := json.Unmarshal(r.Body, &outer); err != nil {
		t.Fatalf("error body %q is not Ironic's: %v", r.Body, err)
	}
	var inner map[string]any
	if err := json.Unmarshal([]byte(outer["error_message"]), &inner); err != nil {
		t.Fatalf("error_message %q is not JSON: %v", outer["error_message"], err)
	}
	if s, ok := inner["faultstring"].(string); ok {
		return s
	}
	s, _ := inner["description"].(string)
	return s
}

// do sends a request at microversion ver ("" sends no header).
func (e *env) do(method, path, ver string, body any) resp {
	e.t.Helper()
	return e.doAs("", method, path, ver, body)
}

// doAs is do with HTTP basic credentials user:pw ("" sends none).
func (e *env) doAs(user, method, path, ver string, body any) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req := httptest.NewRequest(method, "http://rivet.test"+path, rd)
	if user != "" {
		req.SetBasicAuth(user, "pw")
	}
	if ver != "" {
		req.Header.Set(HeaderVersion, ver)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return resp{Code: rec.Code, Header: rec.Result().Header, Body: rec.Body.Bytes()}
}

// must asserts the status and returns the response.
func (e *env) must(code int, method, path, ver string, body any) resp {
	e.t.Helper()
	r := e.do(method, path, ver, body)
	if r.Code != code {
		e.t.Fatalf("%s %s @%s: status %d, want %d; body %s", method, path, ver, r.Code, code, r.Body)
	}
	return r
}

// node creates a fake-hardware node at latest and returns its uuid.
func (e *env) node(fields map[string]any) string {
	e.t.Helper()
	body := map[string]any{"driver": "fake-hardware"}
	for k, v := range fields {
		body[k] = v
	}
	r := e.must(http.StatusCreated, "POST", "/v1/nodes", "latest", body)
	return r.JSON(e.t)["uuid"].(string)
}

// withT returns e reporting to t (fuzz iterations must not use the F).
func (e *env) withT(t testing.TB) *env {
	c := *e
	c.t = t
	return &c
}
