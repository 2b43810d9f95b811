package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
)

// portFieldEnv is an env serving up to 1.110 with a node n1.
func portFieldEnv(t *testing.T) (*env, string) {
	t.Helper()
	e := newEnv(t, withMaxAPI("1.110"))
	return e, e.node(map[string]any{"name": "n1"})
}

// prevVersion is the microversion just below ver.
func prevVersion(ver string) string {
	v := version.MustParse(ver)
	v.Minor--
	return v.String()
}

// checkTextField proves a port or portgroup text field of version ver:
// one version below, setting it (POST, PATCH) or naming it in ?fields= or
// ?sort_key= is 406 and it is hidden; from ver it is set, shown, patched
// and cleared, and a value over max characters is Ironic's schema error.
func checkTextField(t *testing.T, e *env, coll, uuid, field, ver string, max int, create map[string]any) {
	t.Helper()
	below := prevVersion(ver)
	body := map[string]any{field: "v1"}
	for k, v := range create {
		body[k] = v
	}
	e.must(http.StatusNotAcceptable, "POST", "/v1/"+coll, below, body)
	patch := []map[string]any{{"op": "add", "path": "/" + field, "value": "v2"}}
	e.must(http.StatusNotAcceptable, "PATCH", "/v1/"+coll+"/"+uuid, below, patch)
	e.must(http.StatusNotAcceptable, "GET", "/v1/"+coll+"/"+uuid+"?fields="+field, below, nil)
	e.must(http.StatusNotAcceptable, "GET", "/v1/"+coll+"?sort_key="+field, below, nil)
	if _, ok := e.must(http.StatusOK, "GET", "/v1/"+coll+"/"+uuid, below, nil).JSON(t)[field]; ok {
		t.Errorf("%s shown at %s", field, below)
	}
	if got := e.must(http.StatusOK, "GET", "/v1/"+coll+"/"+uuid, ver, nil).JSON(t)[field]; got != nil {
		t.Errorf("%s unset = %v, want null", field, got)
	}
	created := e.must(http.StatusCreated, "POST", "/v1/"+coll, ver, body).JSON(t)
	if created[field] != "v1" {
		t.Errorf("created %s = %v", field, created[field])
	}
	if got := e.must(http.StatusOK, "PATCH", "/v1/"+coll+"/"+uuid, ver, patch).JSON(t)[field]; got != "v2" {
		t.Errorf("patched %s = %v", field, got)
	}
	e.must(http.StatusOK, "GET", "/v1/"+coll+"?sort_key="+field, ver, nil)
	if got := e.must(http.StatusOK, "GET", "/v1/"+coll+"/"+uuid+"?fields="+field, ver, nil).JSON(t); got[field] != "v2" || len(got) != 2 {
		t.Errorf("?fields=%s: %v", field, got)
	}
	long := strings.Repeat("x", max+1)
	kind := strings.TrimSuffix(coll, "s")
	if got := e.must(http.StatusBadRequest, "PATCH", "/v1/"+coll+"/"+uuid, ver, []map[string]any{{"op": "replace", "path": "/" + field, "value": long}}).Fault(t); got != "Schema error for "+kind+": '"+long+"' is too long" {
		t.Errorf("%s too long: %q", field, got)
	}
	if got := e.must(http.StatusOK, "PATCH", "/v1/"+coll+"/"+uuid, ver, []map[string]any{{"op": "remove", "path": "/" + field}}).JSON(t)[field]; got != nil {
		t.Errorf("removed %s = %v", field, got)
	}
}

func TestV1_34PortPhysicalNetwork(t *testing.T) {
	e, id := portFieldEnv(t)
	p := e.must(http.StatusCreated, "POST", "/v1/ports", "1.34", map[string]any{"node_uuid": id, "address": "52:54:00:00:01:01"}).JSON(t)["uuid"].(string)
	checkTextField(t, e, "ports", p, "physical_network", "1.34", 64, map[string]any{"node_uuid": id, "address": "52:54:00:00:01:02"})
	if got := e.must(http.StatusBadRequest, "PATCH", "/v1/ports/"+p, "1.34", []map[string]any{{"op": "add", "path": "/physical_network", "value": ""}}).Fault(t); got != "A non-empty value is required when setting physical_network" {
		t.Errorf("empty: %q", got)
	}
}

// TestV1_34PinnedPort: pinned to 0.2 (Port 1.0) the field cannot be set.
func TestV1_34PinnedPort(t *testing.T) {
	tbl := release.Default()
	pin, err := tbl.ParsePin("0.2")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvPinned(t, release.NewPinner(tbl, pin), withMaxAPI("1.110"))
	id := e.node(nil)
	e.must(http.StatusNotAcceptable, "POST", "/v1/ports", "1.34", map[string]any{"node_uuid": id, "address": "52:54:00:00:01:01", "physical_network": "p"})
	got := e.must(http.StatusCreated, "POST", "/v1/ports", "latest", map[string]any{"node_uuid": id, "address": "52:54:00:00:01:01"}).JSON(t)
	if _, ok := got["physical_network"]; ok {
		t.Errorf("pinned port shows physical_network: %v", got)
	}
}

func TestV1_53PortSmartNIC(t *testing.T) {
	e, id := portFieldEnv(t)
	smart := map[string]any{"node_uuid": id, "address": "52:54:00:00:02:01", "is_smartnic": true,
		"local_link_connection": map[string]any{"port_id": "p1", "hostname": "host1"}}
	e.must(http.StatusNotAcceptable, "POST", "/v1/ports", "1.52", smart)
	if got := e.must(http.StatusBadRequest, "POST", "/v1/ports", "1.53", map[string]any{"node_uuid": id, "address": "52:54:00:00:02:02",
		"is_smartnic": true, "local_link_connection": map[string]any{"port_id": "p1"}}).Fault(t); got != "Smart NIC port must have port_id and hostname in local_link_connection" {
		t.Errorf("smart NIC without hostname: %q", got)
	}
	p := e.must(http.StatusCreated, "POST", "/v1/ports", "1.53", smart).JSON(t)
	if p["is_smartnic"] != true {
		t.Errorf("is_smartnic = %v", p["is_smartnic"])
	}
	plain := e.must(http.StatusCreated, "POST", "/v1/ports", "1.53", map[string]any{"node_uuid": id, "address": "52:54:00:00:02:03"}).JSON(t)
	if plain["is_smartnic"] != false {
		t.Errorf("default is_smartnic = %v", plain["is_smartnic"])
	}
	if _, ok := e.must(http.StatusOK, "GET", "/v1/ports/"+plain["uuid"].(string), "1.52", nil).JSON(t)["is_smartnic"]; ok {
		t.Error("is_smartnic shown at 1.52")
	}
	e.must(http.StatusNotAcceptable, "PATCH", "/v1/ports/"+plain["uuid"].(string), "1.52", []map[string]any{{"op": "replace", "path": "/is_smartnic", "value": true}})
	e.must(http.StatusNotAcceptable, "GET", "/v1/ports?fields=is_smartnic", "1.52", nil)
}

func TestV1_64LocalLinkNetworkType(t *testing.T) {
	e, id := portFieldEnv(t)
	body := map[string]any{"node_uuid": id, "address": "52:54:00:00:03:01", "local_link_connection": map[string]any{"network_type": "unmanaged"}}
	e.must(http.StatusNotAcceptable, "POST", "/v1/ports", "1.63", body)
	p := e.must(http.StatusCreated, "POST", "/v1/ports", "1.64", body).JSON(t)["uuid"].(string)
	patch := []map[string]any{{"op": "replace", "path": "/local_link_connection/network_type", "value": "managed"}}
	e.must(http.StatusNotAcceptable, "PATCH", "/v1/ports/"+p, "1.63", patch)
	if got := e.must(http.StatusOK, "PATCH", "/v1/ports/"+p, "1.64", patch).JSON(t)["local_link_connection"].(map[string]any); got["network_type"] != "managed" {
		t.Errorf("patched local_link_connection %v", got)
	}
}

func TestV1_88PortName(t *testing.T) {
	e, id := portFieldEnv(t)
	p := e.must(http.StatusCreated, "POST", "/v1/ports", "1.88", map[string]any{"node_uuid": id, "address": "52:54:00:00:04:01"}).JSON(t)["uuid"].(string)
	checkTextField(t, e, "ports", p, "name", "1.88", 255, map[string]any{"node_uuid": id, "address": "52:54:00:00:04:02"})
	e.must(http.StatusOK, "PATCH", "/v1/ports/"+p, "1.88", []map[string]any{{"op": "add", "path": "/name", "value": "eth0"}})
	if got := e.must(http.StatusOK, "GET", "/v1/ports/eth0", "1.88", nil).JSON(t)["uuid"]; got != p {
		t.Errorf("port by name = %v", got)
	}
	if got := e.must(http.StatusConflict, "POST", "/v1/ports", "1.88", map[string]any{"node_uuid": id, "address": "52:54:00:00:04:03", "name": "eth0"}).Fault(t); got != "A port with name eth0 already exists." {
		t.Errorf("duplicate name: %q", got)
	}
	e.must(http.StatusNotFound, "GET", "/v1/ports/eth9", "1.88", nil)
}

func TestV1_90OVNVTEP(t *testing.T) {
	e, id := portFieldEnv(t)
	llc := map[string]any{"port_id": "p1", "vtep-logical-switch": "ls1", "vtep-physical-switch": "ps1"}
	body := map[string]any{"node_uuid": id, "address": "52:54:00:00:05:01", "local_link_connection": llc}
	for _, ver := range []string{"1.89", "1.105"} {
		e.must(http.StatusNotAcceptable, "POST", "/v1/ports", ver, body)
	}
	p := e.must(http.StatusCreated, "POST", "/v1/ports", "1.90", body).JSON(t)["uuid"].(string)
	for ver, want := range map[string]int{"1.89": 0, "1.90": 3, "1.104": 3, "1.105": 0} {
		if got := e.must(http.StatusOK, "GET", "/v1/ports/"+p, ver, nil).JSON(t)["local_link_connection"].(map[string]any); len(got) != want {
			t.Errorf("local_link_connection at %s: %v", ver, got)
		}
	}
}

func TestV1_94PortNodeIdent(t *testing.T) {
	e, id := portFieldEnv(t)
	body := map[string]any{"node_ident": "n1", "address": "52:54:00:00:06:01"}
	e.must(http.StatusNotAcceptable, "POST", "/v1/ports", "1.93", body)
	if got := e.must(http.StatusCreated, "POST", "/v1/ports", "1.94", body).JSON(t)["node_uuid"]; got != id {
		t.Errorf("node_uuid = %v, want %s", got, id)
	}
	e.must(http.StatusBadRequest, "POST", "/v1/ports", "1.94", map[string]any{"node_ident": "nope", "address": "52:54:00:00:06:02"})
	e.must(http.StatusBadRequest, "POST", "/v1/ports", "1.94", map[string]any{"node_ident": "n1", "node_uuid": id, "address": "52:54:00:00:06:03"})
	// Issue 31: a name in node_uuid says what to send instead.
	got := e.must(http.StatusBadRequest, "POST", "/v1/ports", "1.94", map[string]any{"node_uuid": "n1", "address": "52:54:00:00:06:04"}).Fault(t)
	want := `Node n1 could not be found. node_uuid takes a node's UUID and "n1" is none: give the UUID (GET /v1/nodes/n1 shows it), ` +
		`or for a port from API 1.94 node_ident, which also takes a name.`
	if got != want {
		t.Errorf("node_uuid=n1: %q, want %q", got, want)
	}
}

// TestPortTextFields: description (1.97), vendor (1.100), category (1.101).
func TestPortTextFields(t *testing.T) {
	for i, tc := range []struct {
		ver, field string
		max        int
	}{{"1.97", "description", 255}, {"1.100", "vendor", 32}, {"1.101", "category", 80}} {
		t.Run(tc.ver, func(t *testing.T) {
			e, id := portFieldEnv(t)
			p := e.must(http.StatusCreated, "POST", "/v1/ports", tc.ver, map[string]any{"node_uuid": id, "address": fmt.Sprintf("52:54:00:00:07:%02d", i)}).JSON(t)["uuid"].(string)
			checkTextField(t, e, "ports", p, tc.field, tc.ver, tc.max, map[string]any{"node_uuid": id, "address": fmt.Sprintf("52:54:00:00:08:%02d", i)})
		})
	}
}

func TestV1_102PortgroupPhysicalNetwork(t *testing.T) {
	e, id := portFieldEnv(t)
	g := e.must(http.StatusCreated, "POST", "/v1/portgroups", "1.102", map[string]any{"node_uuid": id, "name": "bond0"}).JSON(t)["uuid"].(string)
	checkTextField(t, e, "portgroups", g, "physical_network", "1.102", 64, map[string]any{"node_uuid": id, "name": "bond1"})
	p := e.must(http.StatusCreated, "POST", "/v1/ports", "1.102", map[string]any{"node_uuid": id, "address": "52:54:00:00:0a:01", "portgroup_uuid": g}).JSON(t)["uuid"].(string)
	patch := []map[string]any{{"op": "add", "path": "/physical_network", "value": "p2"}}
	if got := e.must(http.StatusBadRequest, "PATCH", "/v1/ports/"+p, "1.102", patch).Fault(t); got != "physical_network cannot be changed while the port belongs to a portgroup." {
		t.Errorf("port physnet in a portgroup at 1.102: %q", got)
	}
	e.must(http.StatusOK, "PATCH", "/v1/ports/"+p, "1.101", patch)
}

func TestV1_103PortgroupCategory(t *testing.T) {
	e, id := portFieldEnv(t)
	g := e.must(http.StatusCreated, "POST", "/v1/portgroups", "1.103", map[string]any{"node_uuid": id, "name": "bond0"}).JSON(t)["uuid"].(string)
	checkTextField(t, e, "portgroups", g, "category", "1.103", 80, map[string]any{"node_uuid": id, "name": "bond1"})
}

func TestV1_99ConductorGroupsFilter(t *testing.T) {
	e, id := portFieldEnv(t)
	other := e.node(nil)
	ctx := context.Background()
	n, err := e.store.GetNode(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	n.ConductorGroup = "rack2"
	if err := e.store.Save(ctx, n); err != nil {
		t.Fatal(err)
	}
	for i, node := range []string{id, other} {
		e.must(http.StatusCreated, "POST", "/v1/ports", "1.99", map[string]any{"node_uuid": node, "address": fmt.Sprintf("52:54:00:00:0b:0%d", i)})
		e.must(http.StatusCreated, "POST", "/v1/portgroups", "1.99", map[string]any{"node_uuid": node, "name": fmt.Sprintf("bond%d", i)})
	}
	for _, coll := range []string{"ports", "portgroups"} {
		e.must(http.StatusNotAcceptable, "GET", "/v1/"+coll+"?conductor_groups=rack2", "1.98", nil)
		for q, want := range map[string]int{"rack2": 1, "rack2,": 1, "rack2,%20": 1, "nope": 0} {
			got := e.must(http.StatusOK, "GET", "/v1/"+coll+"/detail?conductor_groups="+q, "1.99", nil).JSON(t)[coll].([]any)
			if len(got) != want || (want == 1 && got[0].(map[string]any)["node_uuid"] != other) {
				t.Errorf("%s?conductor_groups=%s: %v", coll, q, got)
			}
		}
		if l := e.must(http.StatusOK, "GET", "/v1/"+coll+"?conductor_groups=,rack2", "1.99", nil).JSON(t)[coll].([]any); len(l) != 1 {
			t.Errorf("%s with an empty group: %v", coll, l)
		}
	}
	if got := e.must(http.StatusBadRequest, "GET", "/v1/ports?conductor_groups=rack2&node="+id, "1.99", nil).Fault(t); got != "Filtering by conductor_groups cannot be combined with node_ident, portgroup_ident, or node address filters." {
		t.Errorf("ports with node and conductor_groups: %q", got)
	}
	if got := e.must(http.StatusBadRequest, "GET", "/v1/portgroups?conductor_groups=rack2&address=52:54:00:00:00:01", "1.99", nil).Fault(t); got != "Filtering by node, address, or shard simultaneously is not supported." {
		t.Errorf("portgroups with address and conductor_groups: %q", got)
	}
}

// TestV1_67VIFPortSelection: vif_info's port_uuid or portgroup_uuid
// travel to the conductor, which attaches there (core/conductor's
// TestFreePortChoice); from 1.67 naming both is 400.
func TestV1_67VIFPortSelection(t *testing.T) {
	e, id := portFieldEnv(t)
	p := e.must(http.StatusCreated, "POST", "/v1/ports", "1.67", map[string]any{"node_uuid": id, "address": "52:54:00:00:0d:01"}).JSON(t)["uuid"].(string)
	both := map[string]any{"id": "vif-1", "port_uuid": p, "portgroup_uuid": p}
	if got := e.must(http.StatusBadRequest, "POST", "/v1/nodes/n1/vifs", "1.67", both).Fault(t); got != "Cannot specify both port_uuid and portgroup_uuid" {
		t.Errorf("both at 1.67: %q", got)
	}
	e.must(http.StatusNoContent, "POST", "/v1/nodes/n1/vifs", "1.66", both)
	p2 := e.must(http.StatusCreated, "POST", "/v1/ports", "1.67", map[string]any{"node_uuid": id, "address": "52:54:00:00:0d:02"}).JSON(t)["uuid"].(string)
	e.must(http.StatusNoContent, "POST", "/v1/nodes/n1/vifs", "1.67", map[string]any{"id": "vif-2", "port_uuid": p2})
	if e.cond.vifInfo["port_uuid"] != p2 {
		t.Errorf("vif_info sent = %v", e.cond.vifInfo)
	}
}
