package api

import (
	"net/http"
	"strings"
	"testing"
)

// validNetworkData is a document of Ironic's network data schema.
var validNetworkData = map[string]any{
	"links": []any{
		map[string]any{"id": "eth0", "type": "phy", "ethernet_mac_address": "52:54:00:12:34:56", "mtu": 1500},
		map[string]any{"id": "vlan100", "type": "vlan", "vlan_mac_address": "52:54:00:12:34:56", "vlan_link": "eth0", "vlan_id": 100},
	},
	"networks": []any{map[string]any{"id": "net0", "link": "vlan100", "network_id": "public", "type": "ipv4",
		"ip_address": "192.0.2.10", "netmask": "255.255.255.0",
		"routes": []any{map[string]any{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "192.0.2.1"}}}},
	"services": []any{map[string]any{"type": "dns", "address": "192.0.2.53"}},
}

// 1.66: node network_data. Hidden below; POST and PATCH setting it are
// 406 below (null on POST is accepted, as every newer field's empty
// value); at 1.66 it is shown ({} when unset), set, replaced and removed;
// a document outside the network data schema is 400 "Invalid
// network_data: …".
func TestV1_66NodeNetworkData(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.66"))
	id := e.node(nil)
	if got := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.65", nil).JSON(t); got["network_data"] != nil {
		t.Errorf("1.65 shows network_data: %v", got["network_data"])
	}
	got := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.66", nil).JSON(t)
	if nd, ok := got["network_data"].(map[string]any); !ok || len(nd) != 0 {
		t.Errorf("1.66 network_data unset: %#v", got["network_data"])
	}
	patch := []map[string]any{{"op": "add", "path": "/network_data", "value": validNetworkData}}
	e.must(http.StatusNotAcceptable, "PATCH", "/v1/nodes/"+id, "1.65", patch)
	e.must(http.StatusNotAcceptable, "POST", "/v1/nodes", "1.65", map[string]any{"driver": "fake-hardware", "network_data": validNetworkData})
	e.must(http.StatusCreated, "POST", "/v1/nodes", "1.65", map[string]any{"driver": "fake-hardware", "network_data": nil})

	got = e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "1.66", patch).JSON(t)
	if nd, _ := got["network_data"].(map[string]any); len(nd["links"].([]any)) != 2 {
		t.Errorf("patched network_data: %v", got["network_data"])
	}
	n, err := e.store.GetNode(t.Context(), id)
	if err != nil || len(n.NetworkData["networks"].([]any)) != 1 {
		t.Fatalf("stored network_data %v, %v", n.NetworkData, err)
	}
	// A patched document outside the schema is refused too.
	e.must(http.StatusBadRequest, "PATCH", "/v1/nodes/"+id, "1.66", []map[string]any{{"op": "remove", "path": "/network_data/services"}})
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "1.66", []map[string]any{{"op": "remove", "path": "/network_data"}})
	if n, _ := e.store.GetNode(t.Context(), id); len(n.NetworkData) != 0 {
		t.Errorf("removed network_data still %v", n.NetworkData)
	}

	created := e.must(http.StatusCreated, "POST", "/v1/nodes", "1.66", map[string]any{"driver": "fake-hardware", "network_data": validNetworkData}).JSON(t)
	if nd, _ := created["network_data"].(map[string]any); nd["services"] == nil {
		t.Errorf("created with network_data: %v", created["network_data"])
	}
	e.must(http.StatusCreated, "POST", "/v1/nodes", "1.66", map[string]any{"driver": "fake-hardware", "network_data": map[string]any{}})

	for name, c := range map[string]struct {
		nd   any
		want string
	}{
		"no links":       {map[string]any{"networks": []any{}, "services": []any{}}, "'links' is a required property"},
		"not an object":  {"eth0", "is not of type 'object'"},
		"links a string": {map[string]any{"links": "eth0", "networks": []any{}, "services": []any{}}, "is not of type 'array'"},
		"link type":      {map[string]any{"links": []any{map[string]any{"id": "e", "type": "wifi", "ethernet_mac_address": "m"}}, "networks": []any{}, "services": []any{}}, "'wifi' is not one of"},
		"vlan id":        {map[string]any{"links": []any{map[string]any{"id": "v", "type": "vlan", "vlan_mac_address": "m", "vlan_link": "e", "vlan_id": "100"}}, "networks": []any{}, "services": []any{}}, "is not of type 'integer'"},
		"network link":   {map[string]any{"links": []any{}, "networks": []any{map[string]any{"id": "n", "network_id": "x", "type": "ipv4"}}, "services": []any{}}, "'link' is a required property"},
		"service type":   {map[string]any{"links": []any{}, "networks": []any{}, "services": []any{map[string]any{"type": "ntp", "address": "a"}}}, "'ntp' is not one of"},
	} {
		for _, req := range []struct {
			method, path string
			body         any
		}{
			{"POST", "/v1/nodes", map[string]any{"driver": "fake-hardware", "network_data": c.nd}},
			{"PATCH", "/v1/nodes/" + id, []map[string]any{{"op": "add", "path": "/network_data", "value": c.nd}}},
		} {
			msg := e.must(http.StatusBadRequest, req.method, req.path, "1.66", req.body).Fault(t)
			if !strings.HasPrefix(msg, "Invalid network_data: ") || !strings.Contains(msg, c.want) {
				t.Errorf("%s, %s: %q, want %q", name, req.method, msg, c.want)
			}
		}
	}
}
