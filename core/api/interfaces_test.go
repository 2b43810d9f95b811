package api

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/rpc"
)

var driverInterfaces = []string{"boot", "console", "deploy", "inspect", "management", "network", "power", "raid", "vendor"}

// driverKeys are the keys of a driver at 1.30–1.32, with detail or not.
func driverKeys(detail bool) []string {
	keys := []string{"hosts", "links", "name", "properties", "type"}
	if detail {
		for _, i := range driverInterfaces {
			keys = append(keys, "default_"+i+"_interface", "enabled_"+i+"_interfaces")
		}
	}
	slices.Sort(keys)
	return keys
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// implementations reads default_*/enabled_* of a driver view into
// iface → [default, enabled...].
func implementations(d map[string]any) map[string][]any {
	out := map[string][]any{}
	for _, i := range driverInterfaces {
		out[i] = append([]any{d["default_"+i+"_interface"]}, d["enabled_"+i+"_interfaces"].([]any)...)
	}
	return out
}

func TestV1_30DynamicDrivers(t *testing.T) {
	e := newEnv(t, func(d *Deps) {
		// cond-c (no hardware interface rows, as a conductor not registered
		// yet) adds redfish: its detail is empty.
		d.Conductors = func(context.Context) ([]rpc.ConductorInfo, error) {
			return []rpc.ConductorInfo{{Hostname: "cond-b", HardwareTypes: []string{"fake-hardware"}},
				{Hostname: "cond-a", HardwareTypes: []string{"fake-hardware", "ipmi"}},
				{Hostname: "cond-c", HardwareTypes: []string{"redfish"}}}, nil
		}
	})

	// Below 1.30: no type, no filters, no detail.
	for _, q := range []string{"?type=dynamic", "?detail=true"} {
		e.must(http.StatusNotAcceptable, "GET", "/v1/drivers"+q, "1.29", nil)
	}
	d := e.must(http.StatusOK, "GET", "/v1/drivers/ipmi", "1.29", nil).JSON(t)
	if diff := cmp.Diff([]string{"hosts", "links", "name", "properties"}, keysOf(d)); diff != "" {
		t.Errorf("driver at 1.29 (-want +got):\n%s", diff)
	}

	for _, ver := range []string{"1.30", "1.31"} {
		list := e.must(http.StatusOK, "GET", "/v1/drivers", ver, nil).JSON(t)["drivers"].([]any)
		if len(list) != 3 {
			t.Fatalf("@%s drivers = %v", ver, list)
		}
		for _, item := range list {
			if diff := cmp.Diff(driverKeys(false), keysOf(item.(map[string]any))); diff != "" || item.(map[string]any)["type"] != "dynamic" {
				t.Errorf("@%s list item (-want +got):\n%s", ver, diff)
			}
		}
		for _, q := range []string{"?detail=true", "?type=dynamic&detail=True", "?detail=1"} {
			list = e.must(http.StatusOK, "GET", "/v1/drivers"+q, ver, nil).JSON(t)["drivers"].([]any)
			for _, item := range list {
				if diff := cmp.Diff(driverKeys(true), keysOf(item.(map[string]any))); diff != "" {
					t.Errorf("@%s %s item (-want +got):\n%s", ver, q, diff)
				}
			}
		}
		d = e.must(http.StatusOK, "GET", "/v1/drivers/ipmi", ver, nil).JSON(t)
		if diff := cmp.Diff(driverKeys(true), keysOf(d)); diff != "" {
			t.Errorf("@%s driver (-want +got):\n%s", ver, diff)
		}
	}

	tests := map[string]map[string][]any{
		// cond-a and cond-b agree on fake-hardware.
		"fake-hardware": {"boot": {"fake", "fake"}, "console": {"no-console", "no-console"},
			"deploy": {"fake", "direct", "fake"}, "inspect": {"fake", "agent", "fake", "no-inspect"}, "management": {"fake", "fake"},
			"network": {"noop", "noop"}, "power": {"fake", "fake"}, "raid": {"no-raid", "no-raid"},
			"vendor": {"no-vendor", "no-vendor"}},
		// cond-a serves iPXE scripts; ipmi has in-band inspection only.
		"ipmi": {"boot": {"ipxe", "ipxe"}, "console": {"no-console", "no-console"}, "deploy": {"ramdisk", "direct", "ramdisk"},
			"inspect": {"no-inspect", "agent", "no-inspect"}, "management": {"ipmitool", "ipmitool"}, "network": {"noop", "noop"},
			"power": {"ipmitool", "ipmitool"}, "raid": {"no-raid", "no-raid"}, "vendor": {"no-vendor", "no-vendor"}},
		"redfish": {"boot": {nil}, "console": {nil}, "deploy": {nil}, "inspect": {nil}, "management": {nil},
			"network": {nil}, "power": {nil}, "raid": {nil}, "vendor": {nil}},
	}
	for hw, want := range tests {
		got := e.must(http.StatusOK, "GET", "/v1/drivers/"+hw, "1.30", nil).JSON(t)
		if diff := cmp.Diff(want, implementations(got)); diff != "" {
			t.Errorf("%s: [default, enabled...] per interface (-want +got):\n%s", hw, diff)
		}
	}

	if got := e.must(http.StatusOK, "GET", "/v1/drivers?type=classic&detail=true", "1.30", nil).JSON(t)["drivers"].([]any); len(got) != 0 {
		t.Errorf("classic drivers = %v", got)
	}
	if got := e.must(http.StatusBadRequest, "GET", "/v1/drivers?type=bogus", "1.30", nil).Fault(t); got != `"type" filter must be one of "classic" or "dynamic", if specified.` {
		t.Errorf("bad type: %q", got)
	}
	e.must(http.StatusBadRequest, "GET", "/v1/drivers?detail=maybe", "1.30", nil)
}

func TestV1_31NodeInterfaces(t *testing.T) {
	e := newEnv(t)
	node := map[string]any{"driver": "fake-hardware", "inspect_interface": "no-inspect"}
	e.must(http.StatusNotAcceptable, "POST", "/v1/nodes", "1.30", node)
	created := e.must(http.StatusCreated, "POST", "/v1/nodes", "1.31", node).JSON(t)
	want := map[string]any{"boot_interface": "fake", "console_interface": "no-console", "deploy_interface": "fake",
		"inspect_interface": "no-inspect", "management_interface": "fake", "network_interface": "noop",
		"power_interface": "fake", "raid_interface": "no-raid", "vendor_interface": "no-vendor"}
	got := map[string]any{}
	for k := range want {
		got[k] = created[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("created node's interfaces (-want +got):\n%s", diff)
	}
	id := created["uuid"].(string)

	// Hidden below 1.31, and asking for them is 406.
	old := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.30", nil).JSON(t)
	if _, ok := old["deploy_interface"]; ok || old["network_interface"] != "noop" {
		t.Errorf("node at 1.30: %v", old)
	}
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes/"+id+"?fields=uuid,deploy_interface", "1.30", nil)
	sel := e.must(http.StatusOK, "GET", "/v1/nodes/"+id+"?fields=uuid,deploy_interface", "1.31", nil).JSON(t)
	if diff := cmp.Diff([]string{"deploy_interface", "links", "uuid"}, keysOf(sel)); diff != "" {
		t.Errorf("fields= at 1.31 (-want +got):\n%s", diff)
	}
	list := e.must(http.StatusOK, "GET", "/v1/nodes/detail", "1.31", nil).JSON(t)["nodes"].([]any)
	if list[0].(map[string]any)["inspect_interface"] != "no-inspect" {
		t.Errorf("detail list: %v", list[0])
	}

	// PATCH: 406 below 1.31; replace, then remove back to the default.
	patch := func(op string, value any) []map[string]any {
		p := map[string]any{"op": op, "path": "/inspect_interface"}
		if value != nil {
			p["value"] = value
		}
		return []map[string]any{p}
	}
	e.must(http.StatusNotAcceptable, "PATCH", "/v1/nodes/"+id, "1.30", patch("replace", "fake"))
	if got := e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "1.31", patch("replace", "fake")).JSON(t)["inspect_interface"]; got != "fake" {
		t.Errorf("after replace: %v", got)
	}
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "1.31", patch("replace", "no-inspect"))
	if got := e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "1.31", patch("remove", nil)).JSON(t)["inspect_interface"]; got != "fake" {
		t.Errorf("after remove: %v, want the default", got)
	}

	bad := map[string]struct {
		body  map[string]any
		fault string
	}{
		"unknown implementation": {map[string]any{"driver": "fake-hardware", "deploy_interface": "iscsi"},
			"Could not find the following interface in the 'ironic.hardware.interfaces.deploy' entrypoint: iscsi. Valid interfaces are ['direct', 'fake']."},
		"not a string": {map[string]any{"driver": "fake-hardware", "power_interface": 7}, ""},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			r := e.must(http.StatusBadRequest, "POST", "/v1/nodes", "1.31", tc.body)
			if tc.fault != "" && r.Fault(t) != tc.fault {
				t.Errorf("fault %q, want %q", r.Fault(t), tc.fault)
			}
		})
	}
	r := e.must(http.StatusBadRequest, "PATCH", "/v1/nodes/"+id, "1.31", []map[string]any{{"op": "replace", "path": "/network_interface", "value": "neutron"}})
	if got := r.Fault(t); got != "Could not find the following interface in the 'ironic.hardware.interfaces.network' entrypoint: neutron. Valid interfaces are ['noop']." {
		t.Errorf("network_interface neutron: %q", got)
	}
}
