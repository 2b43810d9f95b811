package api

import (
	"net/http"
	"testing"
)

// deployEnv is an env serving up to 1.72 with an available node.
func deployEnv(t *testing.T) (*env, string) {
	t.Helper()
	e, id, _ := agentEnv(t, "available", withMaxAPI("1.72"))
	return e, id
}

// 1.35: a config drive with rebuild. Below, 400 naming active only.
func TestV1_35RebuildConfigdrive(t *testing.T) {
	e, id := deployEnv(t)
	n, _ := e.store.GetNode(t.Context(), id)
	n.ProvisionState = "active"
	if err := e.store.Save(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"target": "rebuild", "configdrive": "H4sIAAAA"}
	if got := e.must(http.StatusBadRequest, "PUT", "/v1/nodes/"+id+"/states/provision", "1.34", body).Fault(t); got != "Adding a config drive is only supported when setting provision state to active" {
		t.Errorf("1.34: %q", got)
	}
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id+"/states/provision", "1.35", body)
	if e.cond.deploy.configdrive != "H4sIAAAA" {
		t.Errorf("configdrive passed on: %v", e.cond.deploy.configdrive)
	}
	if got := e.must(http.StatusBadRequest, "PUT", "/v1/nodes/"+id+"/states/provision", "1.35", map[string]any{"target": "deleted", "configdrive": "H4sI"}).Fault(t); got != "Adding a config drive is only supported when setting provision state to active, rebuild" {
		t.Errorf("deleted: %q", got)
	}
}

// 1.56: a config drive as a JSON object (built by the conductor); 1.59:
// with vendor_data. Below each, Ironic's 400; unknown keys and a string
// that is neither base64 nor a URL are 400 at any version.
func TestV1_56BuildConfigdrive(t *testing.T) {
	e, id := deployEnv(t)
	cd := map[string]any{"meta_data": map[string]any{"hostname": "web-1"}, "user_data": "#cloud-config\n"}
	put := func(ver string, want int, cd any) string {
		t.Helper()
		r := e.must(want, "PUT", "/v1/nodes/"+id+"/states/provision", ver, map[string]any{"target": "active", "configdrive": cd})
		if want != http.StatusAccepted {
			return r.Fault(t)
		}
		n, _ := e.store.GetNode(t.Context(), id)
		n.ProvisionState = "available"
		if err := e.store.Save(t.Context(), n); err != nil {
			t.Fatal(err)
		}
		return ""
	}
	if got := put("1.55", 400, cd); got != "Providing a JSON object for configdrive is only supported starting with API version 1.56" {
		t.Errorf("1.55: %q", got)
	}
	put("1.56", 202, cd)
	if got, _ := e.cond.deploy.configdrive.(map[string]any); got["meta_data"] == nil {
		t.Errorf("configdrive passed on: %v", e.cond.deploy.configdrive)
	}
	withVendor := map[string]any{"vendor_data": map[string]any{"k": "v"}}
	if got := put("1.58", 400, withVendor); got != "Providing vendor_data in configdrive is only supported starting with API version 1.59" {
		t.Errorf("1.58: %q", got)
	}
	put("1.59", 202, withVendor)
	if got := put("1.59", 400, map[string]any{"metadata": map[string]any{}}); got != "Invalid configdrive format: Additional properties are not allowed ('metadata' was unexpected)" {
		t.Errorf("unknown key: %q", got)
	}
	if got := put("1.59", 400, "{not base64}"); got != "Invalid configdrive format: it is neither a JSON, nor a URL, nor a base64 string" {
		t.Errorf("bad string: %q", got)
	}
	put("1.59", 202, "https://configdrives.example/n1.iso.gz")
}

// 1.69: deploy_steps with active and rebuild. Below, 406 as Ironic for a
// newer argument; invalid steps 400; with another verb 400.
func TestV1_69DeploySteps(t *testing.T) {
	e, id := deployEnv(t)
	steps := []map[string]any{{"interface": "deploy", "step": "erase_devices_metadata", "priority": 90, "args": map[string]any{}}}
	e.must(http.StatusNotAcceptable, "PUT", "/v1/nodes/"+id+"/states/provision", "1.68", map[string]any{"target": "active", "deploy_steps": steps})
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id+"/states/provision", "1.69", map[string]any{"target": "active", "deploy_steps": steps})
	if len(e.cond.deploy.steps) != 1 || e.cond.deploy.steps[0]["step"] != "erase_devices_metadata" {
		t.Errorf("steps passed on: %v", e.cond.deploy.steps)
	}
	n, _ := e.store.GetNode(t.Context(), id)
	n.ProvisionState = "manageable"
	if err := e.store.Save(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]map[string]any{
		"other verb":  {"target": "provide", "deploy_steps": steps},
		"no priority": {"target": "active", "deploy_steps": []map[string]any{{"interface": "deploy", "step": "x", "args": map[string]any{}}}},
		"bad iface":   {"target": "active", "deploy_steps": []map[string]any{{"interface": "boot", "step": "x", "args": map[string]any{}, "priority": 1}}},
	} {
		e.must(http.StatusBadRequest, "PUT", "/v1/nodes/"+id+"/states/provision", "1.69", body)
		_ = name
	}
}
