package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/api"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
)

// httpCall sends one request at ver and returns the status and the JSON
// body (nil when empty).
func httpCall(t *testing.T, base, ver, method, path, body string) (int, map[string]any) {
	t.Helper()
	return httpCallAs(t, base, "", ver, method, path, body)
}

// httpCallAs is httpCall as user (HTTP basic auth, password "pw"), or
// anonymous when user is empty.
func httpCallAs(t *testing.T, base, user, ver, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	if user != "" {
		req.SetBasicAuth(user, "pw")
	}
	req.Header.Set(api.HeaderVersion, ver)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestVIFsAndNMIThroughRealConductor: API 1.28 VIFs and 1.29 NMI over a
// real conductor (fake-hardware, noop network): the attachment shows in
// the port's internal_info, Ironic's errors come back, and below the
// versions the resources do not exist.
func TestVIFsAndNMIThroughRealConductor(t *testing.T) {
	srv := httptest.NewServer(newStack(t))
	defer srv.Close()
	call := func(ver, method, path, body string, want int) map[string]any {
		t.Helper()
		code, out := httpCall(t, srv.URL, ver, method, path, body)
		if code != want {
			t.Fatalf("%s %s @%s: %d, want %d: %v", method, path, ver, code, want, out)
		}
		return out
	}
	id := call("1.29", "POST", "/v1/nodes", `{"name":"n1","driver":"fake-hardware"}`, 201)["uuid"].(string)
	port := call("1.29", "POST", "/v1/ports", `{"node_uuid":"`+id+`","address":"52:54:00:00:00:aa"}`, 201)["uuid"].(string)

	call("1.27", "GET", "/v1/nodes/n1/vifs", "", 404)
	call("1.28", "POST", "/v1/nodes/n1/vifs", `{"id":"1f8a3c0e-0000-4000-8000-000000000001"}`, 204)
	vifs := call("1.28", "GET", "/v1/nodes/n1/vifs", "", 200)["vifs"].([]any)
	if len(vifs) != 1 || vifs[0].(map[string]any)["id"] != "1f8a3c0e-0000-4000-8000-000000000001" {
		t.Fatalf("vifs = %v", vifs)
	}
	info := call("1.28", "GET", "/v1/ports/"+port, "", 200)["internal_info"].(map[string]any)
	if info["tenant_vif_port_id"] != "1f8a3c0e-0000-4000-8000-000000000001" {
		t.Errorf("port internal_info = %v", info)
	}
	fault := func(out map[string]any) string {
		var inner map[string]any
		_ = json.Unmarshal([]byte(out["error_message"].(string)), &inner)
		s, _ := inner["faultstring"].(string)
		return s
	}
	if got := fault(call("1.28", "POST", "/v1/nodes/n1/vifs", `{"id":"1f8a3c0e-0000-4000-8000-000000000001"}`, 409)); got !=
		"Unable to attach VIF because VIF 1f8a3c0e-0000-4000-8000-000000000001 is already attached to Ironic Port "+port {
		t.Errorf("twice: %q", got)
	}
	if got := fault(call("1.28", "POST", "/v1/nodes/n1/vifs", `{"id":"vif-2"}`, 400)); got != "Unable to attach VIF vif-2, not enough free physical ports." {
		t.Errorf("no free port: %q", got)
	}
	if got := fault(call("1.28", "DELETE", "/v1/ports/"+port, "", 409)); !strings.Contains(got, "as it is bound to VIF") {
		t.Errorf("delete a bound port: %q", got)
	}
	call("1.28", "DELETE", "/v1/nodes/n1/vifs/1f8a3c0e-0000-4000-8000-000000000001", "", 204)
	call("1.28", "DELETE", "/v1/nodes/n1/vifs/1f8a3c0e-0000-4000-8000-000000000001", "", 400)
	if vifs := call("1.28", "GET", "/v1/nodes/n1/vifs", "", 200)["vifs"].([]any); len(vifs) != 0 {
		t.Errorf("after detach: %v", vifs)
	}
	if info := call("1.28", "GET", "/v1/ports/"+port, "", 200)["internal_info"].(map[string]any); len(info) != 0 {
		t.Errorf("port internal_info after detach = %v", info)
	}

	call("1.28", "PUT", "/v1/nodes/n1/management/inject_nmi", "{}", 404)
	call("1.29", "PUT", "/v1/nodes/n1/management/inject_nmi", "{}", 204)
	if n := call("1.29", "GET", "/v1/nodes/n1", "", 200); n["reservation"] != nil {
		t.Errorf("lease left behind: %v", n["reservation"])
	}
}

// TestVIFsAndNMIPinnedToTheOldRelease: API and conductor pinned to a
// release at API 1.26 / RPC 1.0 refuse 1.28 and 1.29 with 406 before
// anything reaches the conductor.
func TestVIFsAndNMIPinnedToTheOldRelease(t *testing.T) {
	v := version.MustParse
	head := release.Default().Head()
	old := release.Entry{Version: "0.1", Name: "tack", API: v("1.26"), RPC: v("1.0"), Objects: head.Objects, ServiceVersion: 1}
	table, err := release.NewTable(head, old)
	if err != nil {
		t.Fatal(err)
	}
	pin, err := table.ParsePin("0.1")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newStackPinned(t, release.NewPinner(table, pin)))
	defer srv.Close()
	if code, out := httpCall(t, srv.URL, "latest", "POST", "/v1/nodes", `{"name":"n1","driver":"fake-hardware"}`); code != 201 {
		t.Fatalf("create: %d %v", code, out)
	}
	for _, c := range []struct{ ver, method, path string }{
		{"1.28", "GET", "/v1/nodes/n1/vifs"}, {"1.28", "POST", "/v1/nodes/n1/vifs"},
		{"1.28", "DELETE", "/v1/nodes/n1/vifs/vif-1"}, {"1.29", "PUT", "/v1/nodes/n1/management/inject_nmi"},
	} {
		if code, out := httpCall(t, srv.URL, c.ver, c.method, c.path, `{"id":"vif-1"}`); code != http.StatusNotAcceptable {
			t.Errorf("%s %s @%s pinned: %d %v", c.method, c.path, c.ver, code, out)
		}
		if code, _ := httpCall(t, srv.URL, "latest", c.method, c.path, `{"id":"vif-1"}`); code != http.StatusNotFound {
			t.Errorf("%s %s @latest pinned: %d, want 404 (1.26 has no such resource)", c.method, c.path, code)
		}
	}
}
