package api

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPortFieldsPerVersion(t *testing.T) {
	e := newEnv(t)
	id := e.node(nil)
	p := e.must(http.StatusCreated, "POST", "/v1/ports", "latest", map[string]any{"node_uuid": id, "address": "52:54:00:AA:BB:01"})
	if p.Header.Get("Location") == "" || p.JSON(t)["address"] != "52:54:00:aa:bb:01" {
		t.Fatalf("create: %s %v", p.Header.Get("Location"), p.JSON(t)["address"])
	}
	pid := p.JSON(t)["uuid"].(string)
	tests := map[string]struct {
		ver  string
		want []string
	}{
		"1.17": {"1.17", []string{"address", "created_at", "extra", "links", "node_uuid", "updated_at", "uuid"}},
		"1.18": {"1.18", []string{"address", "created_at", "extra", "internal_info", "links", "node_uuid", "updated_at", "uuid"}},
		"1.19": {"1.19", []string{"address", "created_at", "extra", "internal_info", "links", "local_link_connection", "node_uuid", "pxe_enabled", "updated_at", "uuid"}},
		"1.24": {"1.24", []string{"address", "created_at", "extra", "internal_info", "links", "local_link_connection", "node_uuid", "portgroup_uuid", "pxe_enabled", "updated_at", "uuid"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := keys(e.must(http.StatusOK, "GET", "/v1/ports/"+pid, tc.ver, nil).JSON(t))
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	e.must(http.StatusNotAcceptable, "POST", "/v1/ports", "1.18", map[string]any{"node_uuid": id, "address": "52:54:00:aa:bb:02", "pxe_enabled": false})
	if got := e.must(http.StatusConflict, "POST", "/v1/ports", "1.19", map[string]any{"node_uuid": id, "address": "52:54:00:aa:bb:01"}).Fault(t); got != "A port with MAC address 52:54:00:aa:bb:01 already exists." {
		t.Errorf("duplicate MAC: %q", got)
	}
	if got := e.must(http.StatusBadRequest, "POST", "/v1/ports", "1.19", map[string]any{"node_uuid": id, "address": "nope"}).Fault(t); got != "Expected a MAC address but received nope." {
		t.Errorf("bad MAC: %q", got)
	}
	e.must(http.StatusBadRequest, "POST", "/v1/ports", "1.19", map[string]any{"node_uuid": id, "address": "52:54:00:aa:bb:03", "internal_info": map[string]any{}})
	got := e.must(http.StatusOK, "PATCH", "/v1/ports/"+pid, "1.19", []map[string]any{{"op": "replace", "path": "/pxe_enabled", "value": false}}).JSON(t)
	if got["pxe_enabled"] != false {
		t.Errorf("pxe_enabled after patch = %v", got["pxe_enabled"])
	}
	list := e.must(http.StatusOK, "GET", "/v1/nodes/"+id+"/ports", "1.1", nil).JSON(t)["ports"].([]any)
	if len(list) != 1 || len(list[0].(map[string]any)) != 3 {
		t.Errorf("node ports = %v", list)
	}
	e.must(http.StatusOK, "GET", "/v1/ports?address=52:54:00:aa:bb:01", "1.1", nil)
	e.must(http.StatusNoContent, "DELETE", "/v1/ports/"+pid, "1.1", nil)
	if got := e.must(http.StatusNotFound, "GET", "/v1/ports/"+pid, "1.1", nil).Fault(t); got != "Port "+pid+" could not be found." {
		t.Errorf("deleted port: %q", got)
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

func TestV1_23Portgroups(t *testing.T) {
	e := newEnv(t)
	id := e.node(nil)
	body := map[string]any{"node_uuid": id, "address": "52:54:00:00:00:10", "name": "bond0"}
	for _, path := range []string{"/v1/portgroups", "/v1/portgroups/bond0"} {
		if got := e.must(http.StatusNotFound, "GET", path, "1.22", nil).Fault(t); got != "Resource could not be found." {
			t.Errorf("%s at 1.22: %q", path, got)
		}
	}
	e.must(http.StatusNotFound, "POST", "/v1/portgroups", "1.22", body)
	for ver, want := range map[string]bool{"1.22": false, "1.23": true} {
		if _, ok := e.must(http.StatusOK, "GET", "/v1/", ver, nil).JSON(t)["portgroups"]; ok != want {
			t.Errorf("/v1 at %s lists portgroups: %v", ver, ok)
		}
	}
	pg := e.must(http.StatusCreated, "POST", "/v1/portgroups", "1.23", body).JSON(t)
	if _, ok := pg["mode"]; ok {
		t.Errorf("mode shown at 1.23")
	}
	if got := e.must(http.StatusConflict, "POST", "/v1/portgroups", "1.23", body).Fault(t); got != "A portgroup with MAC address 52:54:00:00:00:10 already exists." {
		t.Errorf("duplicate: %q", got)
	}
	e.must(http.StatusOK, "GET", "/v1/portgroups/bond0", "1.23", nil)
	e.must(http.StatusOK, "PATCH", "/v1/portgroups/bond0", "1.23", []map[string]any{{"op": "add", "path": "/extra/a", "value": "b"}})
	e.must(http.StatusNoContent, "DELETE", "/v1/portgroups/bond0", "1.23", nil)
}

func TestV1_24SubCollections(t *testing.T) {
	e := newEnv(t)
	id := e.node(nil)
	pg := e.must(http.StatusCreated, "POST", "/v1/portgroups", "1.24", map[string]any{"node_uuid": id, "name": "bond0"}).JSON(t)["uuid"].(string)
	e.must(http.StatusNotAcceptable, "POST", "/v1/ports", "1.23", map[string]any{"node_uuid": id, "address": "52:54:00:00:00:01", "portgroup_uuid": pg})
	p := e.must(http.StatusCreated, "POST", "/v1/ports", "1.24", map[string]any{"node_uuid": id, "address": "52:54:00:00:00:01", "portgroup_uuid": pg}).JSON(t)
	if p["portgroup_uuid"] != pg {
		t.Errorf("portgroup_uuid = %v", p["portgroup_uuid"])
	}
	e.must(http.StatusNotFound, "GET", "/v1/nodes/"+id+"/portgroups", "1.23", nil)
	e.must(http.StatusNotFound, "GET", "/v1/portgroups/"+pg+"/ports", "1.23", nil)
	if n := len(e.must(http.StatusOK, "GET", "/v1/nodes/"+id+"/portgroups", "1.24", nil).JSON(t)["portgroups"].([]any)); n != 1 {
		t.Errorf("node portgroups: %d", n)
	}
	if n := len(e.must(http.StatusOK, "GET", "/v1/portgroups/"+pg+"/ports/detail", "1.24", nil).JSON(t)["ports"].([]any)); n != 1 {
		t.Errorf("portgroup ports: %d", n)
	}
	e.must(http.StatusNotAcceptable, "GET", "/v1/ports?portgroup="+pg, "1.23", nil)
}

func TestV1_26PortgroupModeProperties(t *testing.T) {
	e := newEnv(t)
	id := e.node(nil)
	e.must(http.StatusNotAcceptable, "POST", "/v1/portgroups", "1.25", map[string]any{"node_uuid": id, "mode": "802.3ad"})
	got := e.must(http.StatusCreated, "POST", "/v1/portgroups", "1.26", map[string]any{"node_uuid": id, "mode": "802.3ad", "properties": map[string]any{"miimon": "100"}}).JSON(t)
	if got["mode"] != "802.3ad" || got["properties"].(map[string]any)["miimon"] != "100" {
		t.Errorf("created %v", got)
	}
	dflt := e.must(http.StatusCreated, "POST", "/v1/portgroups", "1.26", map[string]any{"node_uuid": id}).JSON(t)
	if dflt["mode"] != "active-backup" {
		t.Errorf("default mode = %v", dflt["mode"])
	}
	e.must(http.StatusNotAcceptable, "PATCH", "/v1/portgroups/"+dflt["uuid"].(string), "1.25", []map[string]any{{"op": "replace", "path": "/mode", "value": "balance-rr"}})
}

func TestV1_22Ramdisk(t *testing.T) {
	e := newEnv(t)
	id := e.node(map[string]any{"driver_info": map[string]any{"ipmi_password": "s3cret"}})
	e.must(http.StatusCreated, "POST", "/v1/ports", "latest", map[string]any{"node_uuid": id, "address": "52:54:00:00:00:22"})
	for ver, want := range map[string]bool{"1.21": false, "1.22": true} {
		doc := e.must(http.StatusOK, "GET", "/v1", ver, nil).JSON(t)
		if _, ok := doc["lookup"]; ok != want {
			t.Errorf("/v1 at %s lists lookup: %v", ver, ok)
		}
		if _, ok := doc["heartbeat"]; ok != want {
			t.Errorf("/v1 at %s lists heartbeat: %v", ver, ok)
		}
	}
	e.must(http.StatusNotFound, "GET", "/v1/lookup?addresses=52:54:00:00:00:22", "1.21", nil)
	e.must(http.StatusNotFound, "POST", "/v1/heartbeat/"+id, "1.21", map[string]any{"callback_url": "http://agent:9999"})
	// enroll is not a state agents look up in.
	e.must(http.StatusNotFound, "GET", "/v1/lookup?addresses=52:54:00:00:00:22", "1.22", nil)
	e.must(http.StatusBadRequest, "GET", "/v1/lookup", "1.22", nil)
	n, _ := e.store.GetNode(t.Context(), id)
	n.ProvisionState = "wait call-back"
	if err := e.store.Save(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	got := e.must(http.StatusOK, "GET", "/v1/lookup?addresses=52:54:00:00:00:22", "1.22", nil).JSON(t)
	if got["node"].(map[string]any)["uuid"] != id {
		t.Errorf("lookup: %v", got)
	}
	token, _ := got["config"].(map[string]any)["agent_token"].(string)
	e.must(http.StatusAccepted, "POST", "/v1/heartbeat/"+id, "1.22", map[string]any{"callback_url": "http://agent:9999", "agent_token": token})
	e.must(http.StatusBadRequest, "POST", "/v1/heartbeat/"+id, "1.26", map[string]any{"callback_url": "http://agent:9999", "agent_version": "9", "agent_token": token})
}

func TestChassis(t *testing.T) {
	e := newEnv(t)
	ch := e.must(http.StatusCreated, "POST", "/v1/chassis", "1.1", map[string]any{"description": "rack"}).JSON(t)["uuid"].(string)
	id := e.node(map[string]any{"chassis_uuid": ch})
	nodes := e.must(http.StatusOK, "GET", "/v1/chassis/"+ch+"/nodes", "1.1", nil).JSON(t)["nodes"].([]any)
	if len(nodes) != 1 || nodes[0].(map[string]any)["uuid"] != id {
		t.Errorf("chassis nodes = %v", nodes)
	}
	if got := e.must(http.StatusBadRequest, "DELETE", "/v1/chassis/"+ch, "1.1", nil).Fault(t); got != "Cannot complete the requested action because chassis "+ch+" contains nodes." {
		t.Errorf("non-empty delete: %q", got)
	}
	got := e.must(http.StatusOK, "PATCH", "/v1/chassis/"+ch, "1.1", []map[string]any{{"op": "replace", "path": "/description", "value": "<rack 2>"}})
	if want := `"description":"<rack 2>"`; !bytesContains(got.Body, want) {
		t.Errorf("patched body %s lacks %s (HTML must not be escaped)", got.Body, want)
	}
	if got := e.must(http.StatusBadRequest, "POST", "/v1/nodes", "latest", map[string]any{"driver": "fake-hardware", "chassis_uuid": "00000000-0000-0000-0000-000000000000"}).Fault(t); got != "Chassis 00000000-0000-0000-0000-000000000000 could not be found." {
		t.Errorf("missing chassis on create: %q", got)
	}
	e.must(http.StatusNotFound, "GET", "/v1/chassis/00000000-0000-0000-0000-000000000000", "1.1", nil)
}

func TestDrivers(t *testing.T) {
	e := newEnv(t)
	got := e.must(http.StatusOK, "GET", "/v1/drivers", "1.26", nil).JSON(t)["drivers"].([]any)
	first := got[0].(map[string]any)
	if first["name"] != "fake-hardware" || cmp.Diff([]any{"cond-a", "cond-b"}, first["hosts"]) != "" {
		t.Errorf("drivers[0] = %v", first)
	}
	if _, ok := first["type"]; ok {
		t.Error("type is 1.30")
	}
	if _, ok := e.must(http.StatusOK, "GET", "/v1/drivers/ipmi", "1.13", nil).JSON(t)["properties"]; ok {
		t.Error("properties link shown at 1.13")
	}
	e.must(http.StatusOK, "GET", "/v1/drivers/fake-hardware/properties", "1.1", nil)
	if got := e.must(http.StatusNotFound, "GET", "/v1/drivers/nope", "1.1", nil).Fault(t); got != "Could not find the following driver(s) or hardware type(s): nope." {
		t.Errorf("missing driver: %q", got)
	}
}
