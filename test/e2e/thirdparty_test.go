package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/test/testenv"
)

// TestThirdPartyDriverInDev is the driver author's path: build the example
// plugin, run `rivet dev --plugin-dir DIR --enable-driver acme`, enroll a
// node of it, read its declared properties and validate it against its BMC
// (right and wrong password). On 9b9faca rivet dev ignored the
// configuration and had no such flags: the node was refused with "No
// valid host was found".
func TestThirdPartyDriverInDev(t *testing.T) {
	plugins := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(plugins, "rivet-driver-acme"), "./plugins/example/cmd/rivet-driver-acme")
	build.Dir = testenv.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the example plugin: %v\n%s", err, out)
	}
	bmc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "admin" || p != "pw" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodGet && r.URL.Path == "/power" {
			json.NewEncoder(w).Encode(map[string]string{"state": "off"})
			return
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	defer bmc.Close()

	d := startDevWith(t, t.TempDir(), 0, "--plugin-dir", plugins, "--enable-driver", "acme")
	if !strings.Contains(d.out.String(), "acme") {
		t.Errorf("rivet dev's banner does not list the acme driver:\n%s", d.out)
	}
	d.rivet(t, "node", "create", "driver=acme", "name=a1", "driver_info/acme_address="+bmc.URL,
		"driver_info/acme_username=admin", "driver_info/acme_password=pw")
	d.rivet(t, "node", "create", "driver=acme", "name=a2", "driver_info/acme_address="+bmc.URL,
		"driver_info/acme_username=admin", "driver_info/acme_password=wrong-pw")

	get := func(path string, out any) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, d.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-OpenStack-Ironic-API-Version", "latest") // node names need 1.5
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	var props map[string]string
	get("/v1/drivers/acme/properties", &props)
	if !strings.HasSuffix(props["acme_address"], "Required.") || len(props) != 3 {
		t.Errorf("acme properties %v, want the three keys the example declares", props)
	}
	type result struct {
		Result bool    `json:"result"`
		Reason *string `json:"reason"`
	}
	var good, bad map[string]result
	get("/v1/nodes/a1/validate", &good)
	get("/v1/nodes/a2/validate", &bad)
	if !good["power"].Result {
		t.Errorf("a1 power validate: %+v, want true", good["power"])
	}
	if r := bad["power"]; r.Result || r.Reason == nil || !strings.HasPrefix(*r.Reason, "BMC refused the credentials") || strings.Contains(*r.Reason, "wrong-pw") {
		t.Errorf("a2 (wrong password) power validate: %+v, want false, BMC refused the credentials, no password", r)
	}
}
