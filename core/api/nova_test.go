package api

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// novaNodeFields are the fields Nova's ironic driver reads
// (nova/virt/ironic/driver.py _NODE_FIELDS), and novaExtraFields those a
// project-aware reader adds (owner 1.50, lessee 1.65, conductor_group 1.46).
var (
	novaNodeFields = []string{"uuid", "power_state", "target_power_state", "provision_state",
		"target_provision_state", "last_error", "maintenance", "properties", "instance_uuid", "traits", "resource_class"}
	novaExtraFields = []string{"owner", "lessee", "conductor_group"}
)

// TestNovaNodeRead reads nodes in the shape Nova's ironic driver does, at
// 1.62 (release 0.3's advertised maximum) and above: its periodic list
// (?associated=&fields=…&limit=), the read of one node by UUID with
// ?fields=, and the lookup by ?instance_uuid=. Each answers exactly the
// fields asked for (and links, as Ironic), with the values stored; with ?shard= and
// ?conductor_group= as a sharded Nova asks (1.82). lessee below 1.65 is
// 406, as Ironic answers a field newer than the request.
func TestNovaNodeRead(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	const inst = "6fbd2bd0-1fb5-4d1c-8c8f-1d4e8fb4cfa1"
	props := map[string]any{"cpu_arch": "x86_64", "cpus": float64(8), "memory_mb": float64(16384), "local_gb": float64(100)}
	used := e.node(map[string]any{"name": "used", "resource_class": "baremetal-large", "properties": props,
		"owner": "p1", "lessee": "p2", "conductor_group": "rack1", "shard": "s1"})
	free := e.node(map[string]any{"name": "free", "resource_class": "baremetal-large", "properties": props, "shard": "s1"})
	other := e.node(map[string]any{"name": "other", "shard": "s2"})
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+used, "1.62", patchOp1("add", "/instance_uuid", inst))
	e.must(http.StatusNoContent, "PUT", "/v1/nodes/"+used+"/traits/CUSTOM_GPU", "1.62", nil)

	check := func(t *testing.T, ver string, got map[string]any, fields []string, id string) {
		t.Helper()
		keys := slices.Sorted(maps.Keys(got))
		// Ironic's sanitize_dict keeps links beside the fields asked for.
		if want := slices.Sorted(slices.Values(append(slices.Clone(fields), "links"))); !slices.Equal(keys, want) {
			t.Errorf("@%s keys %v, want %v", ver, keys, want)
		}
		if got["uuid"] != id {
			t.Errorf("@%s uuid %v, want %s", ver, got["uuid"], id)
		}
		if got["maintenance"] != false || got["provision_state"] != "enroll" || (id != other && got["resource_class"] != "baremetal-large") {
			t.Errorf("@%s node %s: %v", ver, id, got)
		}
		if id == used {
			if got["instance_uuid"] != inst || !slices.Equal(toStrings(got["traits"]), []string{"CUSTOM_GPU"}) {
				t.Errorf("@%s used node: instance_uuid %v, traits %v", ver, got["instance_uuid"], got["traits"])
			}
			if p, _ := got["properties"].(map[string]any); p["memory_mb"] != float64(16384) {
				t.Errorf("@%s properties %v", ver, got["properties"])
			}
			if _, ok := got["owner"]; ok && (got["owner"] != "p1" || got["lessee"] != "p2" || got["conductor_group"] != "rack1") {
				t.Errorf("@%s owner %v lessee %v conductor_group %v", ver, got["owner"], got["lessee"], got["conductor_group"])
			}
		}
	}
	for _, ver := range []string{"1.62", "1.65", "1.82", maxAPI03} {
		sets := [][]string{novaNodeFields}
		if ver != "1.62" {
			sets = append(sets, append(slices.Clone(novaNodeFields), novaExtraFields...))
		}
		for _, fields := range sets {
			q := "fields=" + strings.Join(fields, ",")
			// The periodic list: associated and unassociated nodes.
			for assoc, want := range map[string][]string{"True": {used}, "False": {free, other}} {
				items := e.must(http.StatusOK, "GET", "/v1/nodes?associated="+assoc+"&limit=1000&"+q, ver, nil).JSON(t)["nodes"].([]any)
				var ids []string
				for _, it := range items {
					n := it.(map[string]any)
					ids = append(ids, n["uuid"].(string))
					check(t, ver, n, fields, n["uuid"].(string))
				}
				slices.Sort(ids)
				if slices.Sort(want); !slices.Equal(ids, want) {
					t.Errorf("@%s ?associated=%s listed %v, want %v", ver, assoc, ids, want)
				}
			}
			check(t, ver, e.must(http.StatusOK, "GET", "/v1/nodes/"+used+"?"+q, ver, nil).JSON(t), fields, used)
			byInst := e.must(http.StatusOK, "GET", "/v1/nodes?instance_uuid="+inst+"&"+q, ver, nil).JSON(t)["nodes"].([]any)
			if len(byInst) != 1 {
				t.Fatalf("@%s ?instance_uuid= listed %v", ver, byInst)
			}
			check(t, ver, byInst[0].(map[string]any), fields, used)
			if ver == "1.62" {
				continue
			}
			// A sharded Nova (1.82) lists its shard, by conductor group too.
			if ver != "1.65" {
				items := e.must(http.StatusOK, "GET", "/v1/nodes?shard=s1&conductor_group=rack1&"+q, ver, nil).JSON(t)["nodes"].([]any)
				if len(items) != 1 || items[0].(map[string]any)["uuid"] != used {
					t.Errorf("@%s ?shard=s1&conductor_group=rack1 listed %v", ver, items)
				}
			}
		}
	}
	q := "fields=" + strings.Join(append(slices.Clone(novaNodeFields), novaExtraFields...), ",")
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes/"+used+"?"+q, "1.62", nil)
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes?"+q, "1.62", nil)
}

func toStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// TestInstanceNameFromDisplayName: as Ironic since 1.104, a PATCH that
// changes instance_info names the node's instance from its display_name
// (what Nova sets, at any version) when the node has no instance_name;
// one it has is kept.
func TestInstanceNameFromDisplayName(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	unnamed := e.node(nil)
	named := e.node(map[string]any{"instance_name": "web-1"})
	instanceName := func(id string) any {
		return e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.104", nil).JSON(t)["instance_name"]
	}
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+unnamed, "1.62", patchOp1("add", "/extra/k", "v"))
	if got := instanceName(unnamed); got != nil {
		t.Errorf("after an extra PATCH instance_name = %v", got)
	}
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+unnamed, "1.62", patchOp1("add", "/instance_info/display_name", "vm-1"))
	if got := instanceName(unnamed); got != "vm-1" {
		t.Errorf("instance_name from display_name = %v, want vm-1", got)
	}
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+unnamed, "1.62", patchOp1("add", "/instance_info/display_name", "vm-2"))
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+named, "1.62", patchOp1("add", "/instance_info/display_name", "vm-3"))
	if a, b := instanceName(unnamed), instanceName(named); a != "vm-1" || b != "web-1" {
		t.Errorf("a named instance was renamed: %v, %v", a, b)
	}
}
