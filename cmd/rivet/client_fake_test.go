package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/rivetmetal/rivet/core/client"
	"github.com/rivetmetal/rivet/core/version"
)

// cliFakeIronic is a small Ironic v1 API for the CLI tests: a version range,
// two nodes (sim-0 available, sim-1 active), states that advance one step
// per poll after a provision request, and a log of what it was sent.
type cliFakeIronic struct {
	min, max string

	mu       sync.Mutex
	nodes    map[string]map[string]any
	steps    map[string][]string // provision states still to go through
	failWith map[string]string   // node → last_error for its deploy
	calls    []string            // "VERSION METHOD /path body"
}

func newCLIFake(t *testing.T, min, max string) (*cliFakeIronic, string) {
	t.Helper()
	// Each test gets its own version cache and a clean environment.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, env := range clientEnv {
		t.Setenv(env, "")
	}
	f := &cliFakeIronic{min: min, max: max, steps: map[string][]string{}, failWith: map[string]string{}, nodes: map[string]map[string]any{
		"sim-0": {"uuid": "11111111-0000-0000-0000-000000000000", "name": "sim-0", "provision_state": "available", "power_state": "power off",
			"maintenance": false, "instance_uuid": nil, "driver": "fake-hardware", "driver_info": map[string]any{"ipmi_address": "10.0.0.1"}},
		"sim-1": {"uuid": "22222222-0000-0000-0000-000000000000", "name": "sim-1", "provision_state": "active", "power_state": "power on",
			"maintenance": false, "instance_uuid": nil, "driver": "fake-hardware", "driver_info": map[string]any{}},
	}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func (f *cliFakeIronic) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *cliFakeIronic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	hdr := r.Header.Get(client.HeaderVersion)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, strings.TrimSpace(hdr+" "+r.Method+" "+r.URL.RequestURI()+" "+string(body)))
	w.Header().Set(client.HeaderMinVersion, f.min)
	w.Header().Set(client.HeaderMaxVersion, f.max)
	w.Header().Set("Openstack-Request-Id", "req-cli")
	eff := version.MustParse(f.max)
	if !strings.EqualFold(hdr, "latest") {
		v, err := version.Parse(hdr)
		if err != nil || v.Less(version.MustParse(f.min)) || version.MustParse(f.max).Less(v) {
			fakeFail(w, 406, "description", "Version "+hdr+" was requested but the minor version is not supported by this service. The supported version range is: ["+f.min+", "+f.max+"].")
			return
		}
		eff = v
	}
	w.Header().Set(client.HeaderVersion, eff.String())
	f.route(w, r, body)
}

func (f *cliFakeIronic) route(w http.ResponseWriter, r *http.Request, body []byte) {
	parts := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/v1"), "/"), "/")
	switch {
	case len(parts) == 1 && parts[0] == "":
		fakeReply(w, 200, map[string]any{"id": "v1"})
	case r.Method == "GET" && len(parts) == 1 && parts[0] == "nodes":
		var list []any
		for _, name := range []string{"sim-0", "sim-1"} {
			n := f.nodes[name]
			list = append(list, map[string]any{"uuid": n["uuid"], "name": n["name"], "provision_state": n["provision_state"],
				"power_state": n["power_state"], "maintenance": n["maintenance"], "instance_uuid": nil})
		}
		fakeReply(w, 200, map[string]any{"nodes": list})
	case r.Method == "POST" && len(parts) == 1 && parts[0] == "nodes":
		var n map[string]any
		_ = json.Unmarshal(body, &n)
		n["uuid"] = "33333333-0000-0000-0000-000000000000"
		fakeReply(w, 201, n)
	case r.Method == "POST" && len(parts) == 1 && parts[0] == "ports":
		var p map[string]any
		_ = json.Unmarshal(body, &p)
		p["uuid"] = "44444444-0000-0000-0000-000000000000"
		fakeReply(w, 201, p)
	case parts[0] == "drivers":
		f.driverRoute(w, parts[1:], w.Header().Get(client.HeaderVersion))
	case parts[0] != "nodes" || len(parts) < 2:
		fakeFail(w, 404, "faultstring", "Not found")
	case f.nodes[parts[1]] == nil:
		fakeFail(w, 404, "faultstring", "Node "+parts[1]+" could not be found.")
	default:
		f.nodeRoute(w, r, parts[1], parts[2:], body)
	}
}

func (f *cliFakeIronic) nodeRoute(w http.ResponseWriter, r *http.Request, name string, sub []string, body []byte) {
	n := f.nodes[name]
	switch strings.Join(append([]string{r.Method}, sub...), " ") {
	case "GET":
		fakeReply(w, 200, n)
	case "PATCH":
		var ops []client.PatchOp
		_ = json.Unmarshal(body, &ops)
		for _, op := range ops {
			if op.Op != "remove" && op.Path == "/name" {
				n["name"] = op.Value
			}
		}
		fakeReply(w, 200, n)
	case "GET validate":
		fakeReply(w, 200, map[string]any{"power": map[string]any{"result": true, "reason": nil},
			"deploy": map[string]any{"result": false, "reason": "missing image_source"}})
	case "GET management boot_device":
		fakeReply(w, 200, map[string]any{"boot_device": "pxe", "persistent": false})
	case "PUT management boot_device":
		w.WriteHeader(204)
	case "PUT maintenance", "DELETE maintenance":
		w.WriteHeader(202)
	case "PUT states power":
		var req struct {
			Target string `json:"target"`
		}
		_ = json.Unmarshal(body, &req)
		if name == "sim-1" && req.Target == client.PowerOff {
			n["last_error"] = "BMC says no"
		} else {
			n["power_state"] = client.PowerReached(req.Target)
		}
		w.WriteHeader(202)
	case "GET vifs", "POST vifs", "DELETE vifs vif-1", "DELETE vifs vif-2", "PUT management inject_nmi":
		needs := "1.28"
		if sub[0] == "management" {
			needs = "1.29"
		}
		if version.MustParse(w.Header().Get(client.HeaderVersion)).Less(version.MustParse(needs)) {
			fakeFail(w, 404, "faultstring", "Resource could not be found.")
			return
		}
		if r.Method == "GET" {
			fakeReply(w, 200, map[string]any{"vifs": []any{map[string]any{"id": "vif-1"}}})
			return
		}
		w.WriteHeader(204)
	case "PUT states provision":
		var req client.ProvisionRequest
		_ = json.Unmarshal(body, &req)
		if req.Target == "active" {
			f.steps[name] = []string{"deploying", "wait call-back", "active"}
			if msg := f.failWith[name]; msg != "" {
				f.steps[name] = []string{"deploying", "deploy failed"}
				n["last_error"] = msg
			}
		}
		w.WriteHeader(202)
	case "GET states":
		if s := f.steps[name]; len(s) > 0 {
			n["provision_state"], f.steps[name] = s[0], s[1:]
		}
		target := any("active")
		if st := n["provision_state"]; st == "active" || strings.HasSuffix(st.(string), "failed") {
			target = nil
		}
		fakeReply(w, 200, map[string]any{"provision_state": n["provision_state"], "target_provision_state": target,
			"last_error": n["last_error"], "power_state": n["power_state"]})
	case "GET history":
		fakeReply(w, 200, map[string]any{"history": []any{
			map[string]any{"uuid": "e5840e39-b4ba-4a93-8071-cff9aa2c9633", "created_at": "2026-11-27T10:00:00+00:00",
				"severity": "ERROR", "event_type": "power", "conductor": "cond-a", "user": nil,
				"event": "Driver fake-hardware failed to set power state to power off: BMC says no (request req-1)"},
		}})
	default:
		fakeFail(w, 405, "faultstring", "not in the fake")
	}
}

func fakeReply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fakeFail(w http.ResponseWriter, status int, key, msg string) {
	inner, _ := json.Marshal(map[string]any{key: msg})
	fakeReply(w, status, map[string]string{"error_message": string(inner)})
}

// driverRoute serves fake-hardware; at 1.30 its detail has two
// interfaces.
func (f *cliFakeIronic) driverRoute(w http.ResponseWriter, sub []string, ver string) {
	switch strings.Join(sub, " ") {
	case "":
		fakeReply(w, 200, map[string]any{"drivers": []any{map[string]any{"name": "fake-hardware", "hosts": []string{"c1"}}}})
	case "fake-hardware":
		d := map[string]any{"name": "fake-hardware", "hosts": []string{"c1"}}
		if version.MustParse(ver).AtLeast(version.New(1, 30)) {
			d["type"] = "dynamic"
			d["default_deploy_interface"], d["enabled_deploy_interfaces"] = "fake", []string{"fake"}
			d["default_inspect_interface"], d["enabled_inspect_interfaces"] = "fake", []string{"fake", "no-inspect"}
		}
		fakeReply(w, 200, d)
	case "fake-hardware properties":
		fakeReply(w, 200, map[string]string{"ipmi_address": "BMC address. Required."})
	default:
		fakeFail(w, 404, "faultstring", "Driver "+sub[0]+" could not be found.")
	}
}
