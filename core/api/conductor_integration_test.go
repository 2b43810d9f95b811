package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/conductor"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/test/stacktest"
)

// TestLifecycleThroughRealConductor runs the API in process against a real
// conductor (fake-hardware, in-process RPC): Ironic's minimal lifecycle
// (reference §10.1) over HTTP, polling the node as clients do.
func TestLifecycleThroughRealConductor(t *testing.T) {
	srv := httptest.NewServer(newStack(t))
	defer srv.Close()

	call := func(method, path string, body string, want int) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set(api.HeaderVersion, "1.26")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d, want %d: %v", method, path, resp.StatusCode, want, out)
		}
		return out
	}
	wait := func(id, state string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			n := call("GET", "/v1/nodes/"+id, "", 200)
			if n["provision_state"] == state && n["target_provision_state"] == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("node never reached %s: %v (last_error %v)", state, n["provision_state"], n["last_error"])
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	drivers := call("GET", "/v1/drivers", "", 200)["drivers"].([]any)
	if len(drivers) != 1 || drivers[0].(map[string]any)["name"] != fake.HardwareType {
		t.Fatalf("drivers = %v", drivers)
	}
	n := call("POST", "/v1/nodes", `{"name":"n1","driver":"fake-hardware","driver_info":{"ipmi_password":"pw"}}`, 201)
	id := n["uuid"].(string)
	if n["provision_state"] != "enroll" {
		t.Fatalf("new node in %v", n["provision_state"])
	}
	call("POST", "/v1/ports", `{"node_uuid":"`+id+`","address":"52:54:00:00:00:aa"}`, 201)
	call("PATCH", "/v1/nodes/n1", `[{"op":"add","path":"/extra/rack","value":"r1"}]`, 200)
	for _, step := range []struct{ verb, state string }{{"manage", "manageable"}, {"provide", "available"}, {"active", "active"}} {
		call("PUT", "/v1/nodes/n1/states/provision", `{"target":"`+step.verb+`"}`, 202)
		wait(id, step.state)
	}
	call("PUT", "/v1/nodes/n1/states/power", `{"target":"power off"}`, 202)
	call("DELETE", "/v1/nodes/n1", "", 409)
	call("PUT", "/v1/nodes/n1/states/provision", `{"target":"deleted"}`, 202)
	wait(id, "available")
	call("DELETE", "/v1/nodes/n1", "", 204)
	call("GET", "/v1/nodes/n1", "", 404)
}

// newStack builds the API over a real conductor (fake-hardware, in-process
// RPC) on a fresh SQLite database.
func newStack(t *testing.T) http.Handler {
	t.Helper()
	return newStackPinned(t, release.NewPinner(release.Default(), release.Pin{}))
}

// newStackPinned is newStack with both services under pinner.
func newStackPinned(t *testing.T, pinner *release.Pinner) http.Handler {
	t.Helper()
	return newStackWith(t, pinner, conductor.StaticDrivers{fake.HardwareType: fake.New(nil)})
}

// newStackWith is newStackPinned with the conductor's drivers; mods
// change the API's Deps before it is built.
func newStackWith(t *testing.T, pinner *release.Pinner, drivers conductor.DriverSet, mods ...func(*api.Deps)) http.Handler {
	t.Helper()
	return newStackTuned(t, pinner, drivers, nil, mods...)
}

// newStackTuned is newStackWith with the conductor's configuration changed
// by tune (nil: unchanged).
func newStackTuned(t *testing.T, pinner *release.Pinner, drivers conductor.DriverSet, tune func(*conductor.Config), mods ...func(*api.Deps)) http.Handler {
	t.Helper()
	dbh, store := stacktest.SQLiteStore(t, pinner, false)
	cfg := stacktest.ConductorConfig("cond-1")
	cfg.PowerSync.Interval, cfg.AutomatedClean, cfg.CheckInterval = 0, false, time.Hour
	if tune != nil {
		tune(&cfg)
	}
	svc := stacktest.StartConductor(t, cfg, conductor.Deps{Store: store, Pinner: pinner, Drivers: drivers})
	deps := stacktest.APIDeps(dbh, store, pinner, svc, cfg.HeartbeatTimeout)
	for _, m := range mods {
		m(&deps)
	}
	h, err := api.New(deps)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestInterfacesThroughRealConductor: at 1.30 a real conductor's catalog
// shows in GET /v1/drivers, and at 1.31 it checks and fills a new node's
// interfaces with Ironic's errors.
func TestInterfacesThroughRealConductor(t *testing.T) {
	srv := httptest.NewServer(newStack(t))
	defer srv.Close()
	call := func(method, path, ver, body string, want int) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set(api.HeaderVersion, ver)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != want {
			t.Fatalf("%s %s @%s: %d, want %d: %v", method, path, ver, resp.StatusCode, want, out)
		}
		return out
	}
	d := call("GET", "/v1/drivers/fake-hardware", "1.30", "", 200)
	if d["default_deploy_interface"] != "fake" || d["default_network_interface"] != "noop" ||
		fmt.Sprint(d["enabled_inspect_interfaces"]) != "[agent fake no-inspect]" {
		t.Fatalf("fake-hardware at 1.30: %v", d)
	}
	n := call("POST", "/v1/nodes", "1.31", `{"driver":"fake-hardware","inspect_interface":"no-inspect"}`, 201)
	if n["deploy_interface"] != "fake" || n["inspect_interface"] != "no-inspect" || n["boot_interface"] != "fake" {
		t.Fatalf("created node: %v", n)
	}
	fault := func(body map[string]any) string {
		var inner map[string]any
		_ = json.Unmarshal([]byte(body["error_message"].(string)), &inner)
		return fmt.Sprint(inner["faultstring"])
	}
	got := fault(call("POST", "/v1/nodes", "1.31", `{"driver":"fake-hardware","boot_interface":"ipxe"}`, 400))
	if want := "Could not find the following interface in the 'ironic.hardware.interfaces.boot' entrypoint: ipxe. Valid interfaces are ['fake']."; got != want {
		t.Fatalf("boot_interface ipxe: %q, want %q", got, want)
	}
	id := n["uuid"].(string)
	call("PATCH", "/v1/nodes/"+id, "1.31", `[{"op":"replace","path":"/inspect_interface","value":"fake"}]`, 200)
	call("PATCH", "/v1/nodes/"+id, "1.30", `[{"op":"replace","path":"/inspect_interface","value":"fake"}]`, 406)

	// Taken identities: the conductor answers them, with Ironic's messages.
	call("POST", "/v1/nodes", "1.31", `{"driver":"fake-hardware","name":"taken","instance_uuid":"7f000000-0000-4000-8000-000000000001"}`, 201)
	for body, want := range map[string]string{
		`{"driver":"fake-hardware","uuid":"` + id + `"}`:                "A node with UUID " + id + " already exists.",
		`{"driver":"fake-hardware","name":"taken"}`:                     "A node with name taken already exists.",
		`{"driver":"fake-hardware","uuid":"` + id + `","name":"taken"}`: "A node with UUID " + id + " already exists.",
		`{"driver":"fake-hardware","uuid":"7f000000-0000-4000-8000-0000000000aa","instance_uuid":"7f000000-0000-4000-8000-000000000001"}`: "Instance 7f000000-0000-4000-8000-000000000001 is already associated with a node, " +
			"it cannot be associated with this other node 7f000000-0000-4000-8000-0000000000aa",
	} {
		if got := fault(call("POST", "/v1/nodes", "1.31", body, 409)); got != want {
			t.Errorf("POST %s: %q, want %q", body, got, want)
		}
	}
}
