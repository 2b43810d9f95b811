package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/jsonlimit"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/rpc/jsonrpc"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/drivers/fake"
)

// newJSONRPCStack is newStack with the conductor reached over JSON-RPC on
// loopback, as rivet api reaches it: the envelope is encoded, sent and
// checked by the conductor's server.
func newJSONRPCStack(t *testing.T) http.Handler {
	t.Helper()
	pinner := release.NewPinner(release.Default(), release.Pin{})
	dbh := dbtest.Open(t, db.SQLite)
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		t.Fatal(err)
	}
	store := db.NewStore(dbh, reg, pinner)
	cfg := conductor.ConfigFrom(config.Default())
	cfg.Hostname, cfg.HeartbeatInterval, cfg.HeartbeatTimeout = "127.0.0.1", 100*time.Millisecond, 5*time.Second
	cfg.PowerSync.Interval, cfg.AutomatedClean, cfg.CheckInterval = 0, false, time.Hour
	svc, err := conductor.New(cfg, conductor.Deps{Store: store, Pinner: pinner,
		Drivers: conductor.StaticDrivers{fake.HardwareType: fake.New(nil)},
		JSONRPC: &conductor.JSONRPCOptions{HostIP: "127.0.0.1", MaxBodyBytes: 4 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop(ctx) })
	lister := func(ctx context.Context) ([]rpc.ConductorInfo, error) {
		return []rpc.ConductorInfo{{Hostname: svc.Addr(), HardwareTypes: []string{fake.HardwareType}}}, nil
	}
	client := rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return pinner.Effective().RPC },
		rpc.ObjectCodecFor(reg, pinner), jsonrpc.NewHTTPTransport(jsonrpc.HTTPTransportOptions{Timeout: 10 * time.Second}))
	h, err := api.New(api.Deps{Store: store, Pinner: pinner, Conductors: lister,
		Conductor: rpc.ConductorAPI{Client: client, Router: rpc.NewRouter(lister, 5, time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// nested is a JSON value nesting depth arrays and objects, innermost 1.
func nested(depth int) string {
	return strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
}

// TestDeepJSONIsAClientError: the nesting limit is checked once, at the
// API, for what the conductor will receive. A body the API accepts (up to
// jsonlimit.DefaultMaxDepth, wherever a PATCH puts its value) travels in a
// JSON-RPC envelope the conductor accepts; one level more is 400 at the
// API. Before, a body 62 to 64 deep passed the API and the conductor
// refused the envelope around it: a 500.
func TestDeepJSONIsAClientError(t *testing.T) {
	srv := httptest.NewServer(newJSONRPCStack(t))
	defer srv.Close()
	call := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set(api.HeaderVersion, "latest")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		msg, _ := out["error_message"].(string)
		return resp.StatusCode, msg
	}
	code, msg := call("POST", "/v1/nodes", `{"name":"deep","driver":"fake-hardware"}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, msg)
	}
	max := jsonlimit.DefaultMaxDepth
	// A patch body is [ { "value": V } ]: V starts at level 3. Path
	// segments add levels the body does not have.
	deepPath := "/extra" + strings.Repeat("/p", max)
	tests := map[string]struct {
		method, path, body string
		want               int
	}{
		"create, 63 deep":                    {"POST", "/v1/nodes", `{"driver":"fake-hardware","extra":` + nested(max-2) + `}`, http.StatusCreated},
		"create, 64 deep":                    {"POST", "/v1/nodes", `{"driver":"fake-hardware","extra":` + nested(max-1) + `}`, http.StatusCreated},
		"create, 65 deep":                    {"POST", "/v1/nodes", `{"driver":"fake-hardware","extra":` + nested(max) + `}`, http.StatusBadRequest},
		"patch, 62 deep":                     {"PATCH", "/v1/nodes/deep", `[{"op":"add","path":"/extra/x","value":` + nested(max-4) + `}]`, http.StatusOK},
		"patch, 63 deep":                     {"PATCH", "/v1/nodes/deep", `[{"op":"add","path":"/extra/x","value":` + nested(max-3) + `}]`, http.StatusOK},
		"patch, 64 deep":                     {"PATCH", "/v1/nodes/deep", `[{"op":"add","path":"/extra/x","value":` + nested(max-2) + `}]`, http.StatusOK},
		"patch, 65 deep":                     {"PATCH", "/v1/nodes/deep", `[{"op":"add","path":"/extra/x","value":` + nested(max-1) + `}]`, http.StatusBadRequest},
		"patch, depth from the path":         {"PATCH", "/v1/nodes/deep", `[{"op":"add","path":"` + deepPath + `","value":1}]`, http.StatusBadRequest},
		"patch, 64 deep, driver_info":        {"PATCH", "/v1/nodes/deep", `[{"op":"add","path":"/driver_info/x","value":` + nested(max-2) + `}]`, http.StatusOK},
		"patch, path and value at the limit": {"PATCH", "/v1/nodes/deep", `[{"op":"add","path":"/properties/a/b","value":` + nested(max-4) + `}]`, http.StatusOK},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			code, msg := call(tc.method, tc.path, tc.body)
			if code != tc.want {
				t.Fatalf("status %d, want %d: %s", code, tc.want, msg)
			}
			if code == http.StatusBadRequest && !strings.Contains(msg, "deeper than 64") {
				t.Errorf("400 does not name the limit: %s", msg)
			}
		})
	}
}
