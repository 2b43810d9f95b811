package api

import (
	"context"
	"net/http"
	"testing"

	"github.com/rivetmetal/rivet/core/catalog"
)

// withRAIDCatalog serves a catalog where fake-hardware's plugin negotiated
// the raid interface: raid_interface "fake" beside the default no-raid.
func withRAIDCatalog() envOption {
	cat := catalog.ForConductor([]catalog.Served{
		{HardwareType: "fake-hardware", Interfaces: []string{"power", "management", "deploy", "inspect", "raid"}},
		{HardwareType: "ipmi", Interfaces: []string{"power", "management", "deploy"}},
	}, catalog.Options{})
	return func(d *Deps) {
		d.Catalog = &catalog.Cache{Load: func(context.Context) (*catalog.Catalog, error) { return cat, nil }}
	}
}

// TestRAIDTargetConfig: PUT .../states/raid (1.12) checks the target
// against Ironic's RAID schema with Ironic's messages and saves it (204);
// {} clears it, even with no-raid; a node whose raid interface is no-raid
// is 404. logical_disk_properties describes the schema for a hardware type
// with a raid interface.
func TestRAIDTargetConfig(t *testing.T) {
	e := newEnv(t, withRAIDCatalog())
	id := e.node(nil)
	raid := "/v1/nodes/" + id + "/states/raid"
	good := map[string]any{"logical_disks": []any{
		map[string]any{"size_gb": 100, "raid_level": "1", "is_root_volume": true, "controller": "RAID.Integrated.1-1",
			"physical_disks": []any{"Disk.Bay.0", "Disk.Bay.1"}},
		map[string]any{"size_gb": "MAX", "raid_level": "5+0", "volume_name": "data", "disk_type": "ssd"},
	}}
	if got := e.must(http.StatusNotFound, "PUT", raid, "1.12", good).Fault(t); got != "Driver fake-hardware does not support raid (disabled or not implemented)." {
		t.Errorf("no-raid: %q", got)
	}
	e.must(http.StatusNoContent, "PUT", raid, "1.12", map[string]any{}) // clearing needs no raid interface
	n, err := e.store.GetNode(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	n.RAIDInterface = ptrTo("fake")
	if err := e.store.Save(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusNotAcceptable, "PUT", raid, "1.11", good)
	e.must(http.StatusNoContent, "PUT", raid, "1.12", good)
	got := e.must(http.StatusOK, "GET", "/v1/nodes/"+id+"/states", "1.12", nil).JSON(t)
	if disks, _ := got["target_raid_config"].(map[string]any)["logical_disks"].([]any); len(disks) != 2 {
		t.Fatalf("target_raid_config = %v", got["target_raid_config"])
	}
	disk := func(kv ...any) map[string]any {
		d := map[string]any{"size_gb": 10, "raid_level": "1"}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(d, kv[i].(string))
			} else {
				d[kv[i].(string)] = kv[i+1]
			}
		}
		return map[string]any{"logical_disks": []any{d}}
	}
	bad := map[string]struct {
		body map[string]any
		want string
	}{
		"no logical_disks":  {map[string]any{"foo": 1}, "RAID config validation error: 'logical_disks' is a required property"},
		"empty list":        {map[string]any{"logical_disks": []any{}}, "RAID config validation error: [] should be non-empty"},
		"unknown level":     {disk("raid_level", "7"), "RAID config validation error: '7' is not one of ['JBOD', '0', '1', '2', '5', '6', '1+0', '5+0', '6+0']"},
		"no size":           {disk("size_gb", nil), "RAID config validation error: 'size_gb' is a required property"},
		"negative size":     {disk("size_gb", -1), "RAID config validation error: -1 is less than the minimum of 0"},
		"bad size word":     {disk("size_gb", "ALL"), "RAID config validation error: 'ALL' is not one of ['MAX']"},
		"unknown key":       {disk("speed", "fast"), "RAID config validation error: Additional properties are not allowed ('speed' was unexpected)"},
		"disks without ctl": {disk("physical_disks", []any{"a", "b"}), "RAID config validation error: 'controller' is a dependency of 'physical_disks'"},
		"zero disks":        {disk("number_of_physical_disks", 0), "RAID config validation error: 0 is less than or equal to the minimum of 0"},
		"bad disk type":     {disk("disk_type", "nvme"), "RAID config validation error: 'nvme' is not one of ['hdd', 'ssd']"},
		"root not bool":     {disk("is_root_volume", "yes"), "RAID config validation error: 'yes' is not of type 'boolean'"},
		"two roots": {map[string]any{"logical_disks": []any{
			map[string]any{"size_gb": 10, "raid_level": "1", "is_root_volume": true},
			map[string]any{"size_gb": 10, "raid_level": "1", "is_root_volume": true}}},
			"Raid config cannot have more than one root volume. 2 root volumes were specified"},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			if got := e.must(http.StatusBadRequest, "PUT", raid, "1.12", tc.body).Fault(t); got != tc.want {
				t.Errorf("fault %q\nwant  %q", got, tc.want)
			}
		})
	}
	e.must(http.StatusNoContent, "PUT", raid, "1.12", map[string]any{})
	if got := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.12", nil).JSON(t)["target_raid_config"]; len(got.(map[string]any)) != 0 {
		t.Errorf("target_raid_config after {} = %v", got)
	}

	props := e.must(http.StatusOK, "GET", "/v1/drivers/fake-hardware/raid/logical_disk_properties", "1.12", nil).JSON(t)
	if len(props) != 10 || props["size_gb"] == nil || props["controller"] == nil {
		t.Errorf("logical_disk_properties = %v", props)
	}
	e.must(http.StatusNotFound, "GET", "/v1/drivers/ipmi/raid/logical_disk_properties", "1.12", nil)
	e.must(http.StatusNotAcceptable, "GET", "/v1/drivers/fake-hardware/raid/logical_disk_properties", "1.11", nil)
}
