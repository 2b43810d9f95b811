package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
	"golang.org/x/crypto/bcrypt"
)

func TestErrorBodies(t *testing.T) {
	e := newEnv(t, func(d *Deps) { d.MaxBodyBytes = 2048 })
	missing := "00000000-0000-0000-0000-000000000001"
	tests := map[string]struct {
		method, path, ver string
		body              any
		code              int
		fault             string
	}{
		"node 404":           {"GET", "/v1/nodes/" + missing, "1.1", nil, 404, "Node " + missing + " could not be found."},
		"portgroup 404":      {"GET", "/v1/portgroups/" + missing, "1.23", nil, 404, "Portgroup " + missing + " could not be found."},
		"unknown path":       {"GET", "/v1/bogus", "1.1", nil, 404, "The resource could not be found."},
		"outside /v1":        {"GET", "/v2", "", nil, 404, "The resource could not be found."},
		"method not allowed": {"POST", "/v1/nodes/detail", "1.1", map[string]any{}, 405, "The method POST is not allowed for this resource."},
		"malformed json":     {"POST", "/v1/nodes", "1.1", `{"driver":`, 400, ""},
		"not an object":      {"POST", "/v1/nodes", "1.1", `[1,2]`, 400, "Invalid JSON body: expected an object"},
		"unknown field":      {"POST", "/v1/nodes", "1.1", map[string]any{"driver": "fake-hardware", "bogus": 1}, 400, "Unknown attribute for argument node: bogus"},
		"read-only field":    {"POST", "/v1/nodes", "1.1", map[string]any{"driver": "fake-hardware", "provision_state": "active"}, 400, "Unknown attribute for argument node: provision_state"},
		"wrong type":         {"POST", "/v1/nodes", "1.1", map[string]any{"driver": 5}, 400, "Invalid input for field/attribute driver. Value: '5'. Wrong type. Expected 'string'."},
		"missing driver":     {"POST", "/v1/nodes", "1.1", map[string]any{}, 400, "Invalid input for field/attribute driver. Value: 'None'. Mandatory field missing."},
		"no conductor":       {"POST", "/v1/nodes", "1.1", map[string]any{"driver": "ipmi"}, 400, `No valid host was found. Reason: No conductor service registered which supports driver ipmi for conductor group "".`},
		"too large":          {"POST", "/v1/nodes", "1.1", `{"driver":"` + strings.Repeat("x", 4096) + `"}`, 413, "Request is too large."},
		"bad version":        {"GET", "/v1/nodes", "abc", nil, 406, "Invalid value for X-OpenStack-Ironic-API-Version header"},
		"fields at 1.7":      {"GET", "/v1/nodes?fields=uuid", "1.7", nil, 406, "Request not acceptable."},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := e.must(tc.code, tc.method, tc.path, tc.ver, tc.body)
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if got := r.Fault(t); tc.fault != "" && got != tc.fault {
				t.Errorf("fault %q, want %q", got, tc.fault)
			}
		})
	}
}

func TestPagination(t *testing.T) {
	e := newEnv(t, func(d *Deps) { d.MaxLimit = 3 })
	var ids []string
	for i := range 5 {
		ids = append(ids, e.node(map[string]any{"name": fmt.Sprintf("n%d", i)}))
	}
	page := e.must(http.StatusOK, "GET", "/v1/nodes?limit=2&fields=uuid,name", "1.8", nil).JSON(t)
	want := "http://rivet.test/v1/nodes?sort_key=id&sort_dir=asc&fields=uuid,name&limit=2&marker=" + ids[1]
	if page["next"] != want {
		t.Errorf("next = %v, want %s", page["next"], want)
	}
	capped := e.must(http.StatusOK, "GET", "/v1/nodes?limit=50", "1.5", nil).JSON(t)
	if n := len(capped["nodes"].([]any)); n != 3 {
		t.Errorf("limit above max_limit gave %d items", n)
	}
	var seen []string
	next := "/v1/nodes?limit=2&sort_key=name&sort_dir=desc"
	for next != "" {
		p := e.must(http.StatusOK, "GET", next, "1.5", nil).JSON(t)
		for _, n := range p["nodes"].([]any) {
			seen = append(seen, n.(map[string]any)["name"].(string))
		}
		next, _ = p["next"].(string)
		next = strings.TrimPrefix(next, "http://rivet.test")
	}
	if d := cmp.Diff([]string{"n4", "n3", "n2", "n1", "n0"}, seen); d != "" {
		t.Errorf("walking pages (-want +got):\n%s", d)
	}
	for q, fault := range map[string]string{
		"limit=0":            "Limit must be positive",
		"limit=-1":           "Limit must be positive",
		"sort_dir=up":        "Invalid sort direction: up. Acceptable values are 'asc' or 'desc'",
		"sort_key=extra":     `The sort_key value extra is an invalid field for sorting`,
		"sort_key=nonsense":  `The sort_key value "nonsense" is an invalid field for sorting`,
		"fields=uuid,bogus":  `Field(s) "bogus" are not valid`,
		"maintenance=maybe":  "Invalid input for field/attribute maintenance. Value: 'maybe'. Wrong type. Expected 'bool'",
		"provision_state=zz": `Provision state "zz" is not valid`,
		"detail=True":        "Invalid query parameter ?detail=True received.",
	} {
		if got := e.must(http.StatusBadRequest, "GET", "/v1/nodes?"+q, "1.26", nil).Fault(t); got != fault {
			t.Errorf("%s: %q, want %q", q, got, fault)
		}
	}
	e.must(http.StatusNotFound, "GET", "/v1/nodes?marker=00000000-0000-0000-0000-000000000009", "1.26", nil)
}

func TestFieldsParameter(t *testing.T) {
	e := newEnv(t)
	id := e.node(nil)
	got := keys(e.must(http.StatusOK, "GET", "/v1/nodes/"+id+"?fields=uuid,power_state", "1.8", nil).JSON(t))
	if d := cmp.Diff([]string{"links", "power_state", "uuid"}, got); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes/"+id+"?fields=uuid", "1.7", nil)
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes/"+id+"?fields=resource_class", "1.20", nil)
	e.must(http.StatusBadRequest, "GET", "/v1/nodes/"+id+"?fields=bogus", "1.20", nil)
}

func TestNodeListFilters(t *testing.T) {
	e := newEnv(t)
	a := e.node(map[string]any{"resource_class": "gold", "maintenance": true})
	b := e.node(map[string]any{"instance_uuid": "11111111-1111-1111-1111-111111111111"})
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/"+b+"/states/provision", "latest", map[string]any{"target": "manage"})
	tests := map[string]struct {
		query, ver string
		code       int
		want       []string
	}{
		"maintenance":              {"maintenance=true", "1.1", 200, []string{a}},
		"associated":               {"associated=True", "1.1", 200, []string{b}},
		"instance_uuid":            {"instance_uuid=11111111-1111-1111-1111-111111111111", "1.1", 200, []string{b}},
		"provision_state at 1.9":   {"provision_state=manageable", "1.9", 200, []string{b}},
		"provision_state at 1.8":   {"provision_state=manageable", "1.8", 406, nil},
		"driver at 1.16":           {"driver=fake-hardware", "1.16", 200, []string{a, b}},
		"driver at 1.15":           {"driver=fake-hardware", "1.15", 406, nil},
		"resource_class at 1.21":   {"resource_class=gold", "1.21", 200, []string{a}},
		"resource_class at 1.20":   {"resource_class=gold", "1.20", 406, nil},
		"resource_class hidden 20": {"", "1.20", 200, []string{a, b}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := e.must(tc.code, "GET", "/v1/nodes/detail?"+tc.query, tc.ver, nil)
			if tc.code != 200 {
				return
			}
			var got []string
			for _, n := range r.JSON(t)["nodes"].([]any) {
				got = append(got, n.(map[string]any)["uuid"].(string))
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestPinnedAPI pins to a test-only release whose API is 1.22: 1.26 is
// refused, latest is 1.22, and portgroups are gone.
func TestPinnedAPI(t *testing.T) {
	v := version.MustParse
	objs := map[string][]version.Version{"Chassis": {v("1.0")}, "Conductor": {v("1.0")}, "Node": {v("1.0")}, "Port": {v("1.0")}, "Portgroup": {v("1.0")}}
	old := release.Entry{Version: "0.1", Name: "tack", API: v("1.22"), RPC: v("1.0"), Objects: objs, ServiceVersion: 1}
	head := release.Default().Head()
	head.ServiceVersion = 2
	table, err := release.NewTable(head, old)
	if err != nil {
		t.Fatal(err)
	}
	pin, err := table.ParsePin("tack")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvPinned(t, release.NewPinner(table, pin))
	r := e.must(http.StatusNotAcceptable, "GET", "/v1/nodes", "1.26", nil)
	if got := r.Fault(t); got != "Version 1.26 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.22]." {
		t.Errorf("fault %q", got)
	}
	if r.Header.Get(HeaderMaxVersion) != "1.22" {
		t.Errorf("max header %q", r.Header.Get(HeaderMaxVersion))
	}
	id := e.node(nil)
	got := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "latest", nil)
	if got.Header.Get(HeaderVersion) != "1.22" {
		t.Errorf("latest negotiated %q", got.Header.Get(HeaderVersion))
	}
	if _, ok := got.JSON(t)["portgroups"]; ok {
		t.Error("portgroups link shown while pinned to 1.22")
	}
	e.must(http.StatusNotFound, "GET", "/v1/portgroups", "latest", nil)
	if _, ok := e.must(http.StatusOK, "GET", "/v1", "latest", nil).JSON(t)["portgroups"]; ok {
		t.Error("/v1 lists portgroups while pinned to 1.22")
	}
}

func TestHTTPBasicAuth(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(d *Deps) { d.Auth = staticUsers{"admin": hash} })
	for _, path := range []string{"/", "/v1"} {
		e.must(http.StatusOK, "GET", path, "", nil)
	}
	r := e.must(http.StatusUnauthorized, "GET", "/v1/nodes", "", nil)
	if r.Header.Get("WWW-Authenticate") != `Basic realm="Baremetal API"` {
		t.Errorf("challenge %q", r.Header.Get("WWW-Authenticate"))
	}
	r.Fault(t)
	for user, code := range map[string]int{"admin:pw": 200, "admin:bad": 401, "eve:pw": 401} {
		u, p, _ := strings.Cut(user, ":")
		req := httptest.NewRequest("GET", "/v1/nodes", nil)
		req.SetBasicAuth(u, p)
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		if rec.Code != code {
			t.Errorf("%s: %d, want %d", user, rec.Code, code)
		}
	}
}

type staticUsers map[string][]byte

func (s staticUsers) Check(user, pw string) bool {
	h, ok := s[user]
	return ok && bcrypt.CompareHashAndPassword(h, []byte(pw)) == nil
}

// TestGophercloudStatusCodes checks the exact codes gophercloud's
// baremetal client requires (reference go-deps §6).
func TestGophercloudStatusCodes(t *testing.T) {
	e := newEnv(t)
	id := e.node(nil)
	n := "/v1/nodes/" + id
	tests := []struct {
		name, method, path string
		body               any
		code               int
	}{
		{"Get", "GET", n, nil, 200},
		{"Update", "PATCH", n, []map[string]any{{"op": "add", "path": "/extra/a", "value": 1}}, 200},
		{"Validate", "GET", n + "/validate", nil, 200},
		{"ChangeProvisionState", "PUT", n + "/states/provision", map[string]any{"target": "manage"}, 202},
		{"ChangePowerState", "PUT", n + "/states/power", map[string]any{"target": "power on"}, 202},
		{"SetMaintenance", "PUT", n + "/maintenance", map[string]any{"reason": "x"}, 202},
		{"UnsetMaintenance", "DELETE", n + "/maintenance", nil, 202},
		{"SetBootDevice", "PUT", n + "/management/boot_device", map[string]any{"boot_device": "pxe"}, 204},
		{"Create", "POST", "/v1/nodes", map[string]any{"driver": "fake-hardware"}, 201},
		{"Delete", "DELETE", n, nil, 204},
	}
	for _, tc := range tests {
		e.must(tc.code, tc.method, tc.path, "1.26", tc.body)
	}
}

func TestRequestIDAndMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newEnv(t, func(d *Deps) { d.Metrics = reg })
	a := e.must(http.StatusOK, "GET", "/v1/nodes", "1.1", nil).Header.Get(HeaderRequestID)
	b := e.must(http.StatusNotFound, "GET", "/v1/nodes/00000000-0000-0000-0000-000000000000", "1.1", nil).Header.Get(HeaderRequestID)
	if !strings.HasPrefix(a, "req-") || len(a) != 40 || a == b {
		t.Errorf("request ids %q %q", a, b)
	}
	body := string(e.must(http.StatusOK, "GET", "/metrics", "", nil).Body)
	for _, want := range []string{
		`rivet_api_requests_total{method="GET",route="GET /v1/nodes",status="200"} 1`,
		`rivet_api_requests_total{method="GET",route="GET /v1/nodes/{node}",status="404"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	_ = context.Background
}
