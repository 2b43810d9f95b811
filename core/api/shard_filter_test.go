package api

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
)

// shardedChildren makes nodes in shards s1, s2 and none, each with a
// port and a portgroup; it returns the ports' and portgroups' UUIDs by
// shard ("" for the unsharded node) and the nodes' UUIDs.
func shardedChildren(t *testing.T, e *env) (ports, pgs, nodes map[string]string) {
	t.Helper()
	ports, pgs, nodes = map[string]string{}, map[string]string{}, map[string]string{}
	for i, shard := range []string{"s1", "s2", ""} {
		body := map[string]any{"driver": "fake-hardware"}
		if shard != "" {
			body["shard"] = shard
		}
		id := e.must(http.StatusCreated, "POST", "/v1/nodes", "1.82", body).JSON(t)["uuid"].(string)
		nodes[shard] = id
		ports[shard] = e.must(http.StatusCreated, "POST", "/v1/ports", "1.82",
			map[string]any{"node_uuid": id, "address": fmt.Sprintf("52:54:00:00:5a:0%d", i)}).JSON(t)["uuid"].(string)
		pgs[shard] = e.must(http.StatusCreated, "POST", "/v1/portgroups", "1.82",
			map[string]any{"node_uuid": id, "name": fmt.Sprintf("bond-s%d", i), "address": fmt.Sprintf("52:54:00:00:5b:0%d", i)}).JSON(t)["uuid"].(string)
	}
	return ports, pgs, nodes
}

// collUUIDs lists the UUIDs of a port or portgroup collection, sorted.
func collUUIDs(t *testing.T, e *env, coll, path, ver string) []string {
	t.Helper()
	var out []string
	for _, it := range e.must(http.StatusOK, "GET", path, ver, nil).JSON(t)[coll].([]any) {
		out = append(out, it.(map[string]any)["uuid"].(string))
	}
	slices.Sort(out)
	return out
}

func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}

// testV1_82PortShards (run by TestV1_82Shards): GET /v1/ports?shard=a,b (1.82) lists the ports of
// the nodes in those shards; 406 with Ironic's message below, even empty.
// Node, portgroup and shard filters are exclusive (403, Ironic's
// OperationNotPermitted); an address is taken before the shards.
func testV1_82PortShards(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	ports, pgs, nodes := shardedChildren(t, e)
	for _, q := range []string{"shard=s1", "shard="} {
		r := e.must(http.StatusNotAcceptable, "GET", "/v1/ports?"+q, "1.81", nil)
		if got := r.Fault(t); got != "Request not acceptable. The minimal required API version should be 1.82" {
			t.Errorf("?%s at 1.81: %q", q, got)
		}
	}
	for q, want := range map[string][]string{
		"shard=s1":                           {ports["s1"]},
		"shard=s1,s2":                        sorted(ports["s1"], ports["s2"]),
		"shard=S2,%20s1,,s2":                 sorted(ports["s1"], ports["s2"]), // Ironic's string_list: trimmed, lower-cased
		"shard=s1&shard=s2":                  sorted(ports["s1"], ports["s2"]),
		"shard=nope":                         nil,
		"shard=":                             sorted(ports["s1"], ports["s2"], ports[""]), // no shard named: no filter
		"shard=s1&limit=1":                   {ports["s1"]},
		"shard=s2&detail=1":                  {ports["s2"]},
		"shard=s1&address=52:54:00:00:5a:02": {ports[""]}, // the address selects
	} {
		for _, path := range []string{"/v1/ports?", "/v1/ports/detail?"} {
			if got := collUUIDs(t, e, "ports", path+q, "1.82"); !slices.Equal(got, want) {
				t.Errorf("%s%s listed %v, want %v", path, q, got, want)
			}
		}
	}
	for _, path := range []string{"/v1/ports?shard=s1&node=" + nodes["s1"], "/v1/ports?shard=s1&node_uuid=" + nodes["s1"],
		"/v1/ports?shard=s1&portgroup=" + pgs["s1"], "/v1/ports?node=" + nodes["s1"] + "&portgroup=" + pgs["s1"],
		"/v1/nodes/" + nodes["s1"] + "/ports?shard=s1", "/v1/nodes/" + nodes["s1"] + "/ports?portgroup=" + pgs["s1"],
		"/v1/portgroups/" + pgs["s1"] + "/ports?shard=s1", "/v1/portgroups/" + pgs["s1"] + "/ports?node=" + nodes["s1"]} {
		if got := e.must(http.StatusForbidden, "GET", path, "1.82", nil).Fault(t); got != "Operation not permitted." {
			t.Errorf("%s: %q", path, got)
		}
	}
	// Still a 403 with a node that does not exist: Ironic checks before
	// it looks the node up.
	e.must(http.StatusForbidden, "GET", "/v1/ports?shard=s1&node=nope", "1.82", nil)
	if got := e.must(http.StatusBadRequest, "GET", "/v1/ports?shard=s1&conductor_groups=g&address=52:54:00:00:5a:00", "1.99", nil).Fault(t); got != "Filtering by conductor_groups cannot be combined with node_ident, portgroup_ident, or node address filters." {
		t.Errorf("address and conductor_groups: %q", got)
	}
	// Shards and conductor groups: the shards select, as in Ironic.
	if got := collUUIDs(t, e, "ports", "/v1/ports?shard=s1&conductor_groups=nope", "1.99"); !slices.Equal(got, []string{ports["s1"]}) {
		t.Errorf("shard with conductor_groups listed %v", got)
	}
	// The path's node is taken before the query's.
	if got := collUUIDs(t, e, "ports", "/v1/nodes/"+nodes["s1"]+"/ports?node="+nodes["s2"], "1.82"); !slices.Equal(got, []string{ports["s1"]}) {
		t.Errorf("node path with another ?node= listed %v", got)
	}
}

// TestV1_106PortgroupShard: GET /v1/portgroups?shard=a,b (1.106) lists the
// portgroups of the nodes in those shards; 406 with Ironic's message
// below (1.82 already has it for nodes and ports). A node, an address,
// shards and conductor groups are exclusive (400).
func TestV1_106PortgroupShard(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	_, pgs, nodes := shardedChildren(t, e)
	for _, q := range []string{"shard=s1", "shard="} {
		for _, path := range []string{"/v1/portgroups?", "/v1/portgroups/detail?", "/v1/nodes/" + nodes["s1"] + "/portgroups?"} {
			r := e.must(http.StatusNotAcceptable, "GET", path+q, "1.105", nil)
			if got := r.Fault(t); got != "Request not acceptable. The minimal required API version should be 1.106" {
				t.Errorf("%s%s at 1.105: %q", path, q, got)
			}
		}
	}
	for q, want := range map[string][]string{
		"shard=s1":           {pgs["s1"]},
		"shard=s1,S2":        sorted(pgs["s1"], pgs["s2"]),
		"shard=s2&shard=s2,": {pgs["s2"]},
		"shard=nope":         nil,
		"shard=":             sorted(pgs["s1"], pgs["s2"], pgs[""]),
	} {
		for _, path := range []string{"/v1/portgroups?", "/v1/portgroups/detail?"} {
			if got := collUUIDs(t, e, "portgroups", path+q, "1.106"); !slices.Equal(got, want) {
				t.Errorf("%s%s listed %v, want %v", path, q, got, want)
			}
		}
	}
	const exclusive = "Filtering by node, address, or shard simultaneously is not supported."
	for _, path := range []string{"/v1/portgroups?shard=s1&node=" + nodes["s1"], "/v1/portgroups?shard=s1&node=nope",
		"/v1/portgroups?shard=s1&address=52:54:00:00:5b:00", "/v1/portgroups?shard=s1&conductor_groups=g",
		"/v1/portgroups?node=" + nodes["s1"] + "&address=52:54:00:00:5b:00",
		"/v1/nodes/" + nodes["s1"] + "/portgroups?shard=s1", "/v1/nodes/" + nodes["s1"] + "/portgroups?address=52:54:00:00:5b:00"} {
		if got := e.must(http.StatusBadRequest, "GET", path, "1.106", nil).Fault(t); got != exclusive {
			t.Errorf("%s: %q", path, got)
		}
	}
	// An empty shard list is no filter, so it combines.
	if got := collUUIDs(t, e, "portgroups", "/v1/portgroups?shard=&node="+nodes["s2"], "1.106"); !slices.Equal(got, []string{pgs["s2"]}) {
		t.Errorf("?shard=&node= listed %v", got)
	}
}

// TestPortDescriptionContains: ?description_contains= lists the ports
// whose description (1.97) holds the text, as Ironic's filter (which it
// does not gate); with an address, the address alone selects.
func TestPortDescriptionContains(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := e.node(nil)
	var ports []string
	for i, d := range []string{"uplink to tor-1", "uplink to tor-2", "bmc"} {
		ports = append(ports, e.must(http.StatusCreated, "POST", "/v1/ports", "1.97",
			map[string]any{"node_uuid": id, "address": fmt.Sprintf("52:54:00:00:5c:0%d", i), "description": d}).JSON(t)["uuid"].(string))
	}
	for q, want := range map[string][]string{
		"description_contains=uplink":                           sorted(ports[0], ports[1]),
		"description_contains=tor-2":                            {ports[1]},
		"description_contains=nope":                             nil,
		"description_contains=uplink&node=" + id:                sorted(ports[0], ports[1]),
		"description_contains=uplink&address=52:54:00:00:5c:02": {ports[2]},
	} {
		if got := collUUIDs(t, e, "ports", "/v1/ports?"+q, "1.97"); !slices.Equal(got, want) {
			t.Errorf("?%s listed %v, want %v", q, got, want)
		}
	}
	if got := collUUIDs(t, e, "ports", "/v1/nodes/"+id+"/ports?description_contains=bmc", "1.97"); !slices.Equal(got, []string{ports[2]}) {
		t.Errorf("node's ports ?description_contains=bmc listed %v", got)
	}
}
