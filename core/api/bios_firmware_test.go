package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
)

// waitProvision polls the node until its provision_state is want (a
// generous bound: the machine may be loaded) and returns it.
func waitProvision(t *testing.T, e *env, id, ver, want string) map[string]any {
	t.Helper()
	var n map[string]any
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		n = e.must(http.StatusOK, "GET", "/v1/nodes/"+id, ver, nil).JSON(t)
		if n["provision_state"] == want && n["target_provision_state"] == nil {
			return n
		}
	}
	t.Fatalf("node %s: provision_state %v (last_error %v), want %s", id, n["provision_state"], n["last_error"], want)
	return nil
}

// TestV1_74BIOSRegistry: with the fake bios interface (a real conductor
// over drivers/fake), verifying a node caches its BIOS settings with the
// registry fields; at 1.73 a setting shows name and value only and the
// list refuses ?detail and ?fields (400), as Ironic's query schema; from
// 1.74 ?detail=True adds the registry fields, ?fields picks from the
// schema's enum, both together are 400, and one setting shows the registry
// fields. A bios.apply_configuration clean step changes a setting and the
// cache follows; a bad step argument and a node on no-bios are refused
// before cleaning starts (400).
func TestV1_74BIOSRegistry(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03), withRealConductor(t))
	id := e.node(map[string]any{"name": "bios-74"})
	if bi := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.74", nil).JSON(t)["bios_interface"]; bi != "fake" {
		t.Fatalf("bios_interface %v, want fake (the fake driver's, negotiated)", bi)
	}
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id+"/states/provision", "1.74", map[string]any{"target": "manage"})
	waitProvision(t, e, id, "1.74", "manageable")
	base := "/v1/nodes/" + id + "/bios"

	// 1.73: name and value; neither detail nor fields.
	items := e.must(http.StatusOK, "GET", base, "1.73", nil).JSON(t)["bios"].([]any)
	if len(items) != 4 {
		t.Fatalf("cached settings %v, want the fake BIOS's 4", items)
	}
	if d := cmp.Diff([]string{"created_at", "links", "name", "updated_at", "value"}, keys(items[0].(map[string]any))); d != "" {
		t.Errorf("1.73 setting fields (-want +got):\n%s", d)
	}
	e.must(http.StatusBadRequest, "GET", base+"?detail=True", "1.73", nil)
	e.must(http.StatusBadRequest, "GET", base+"?fields=name", "1.73", nil)
	one := e.must(http.StatusOK, "GET", base+"/ProcVirtualization", "1.73", nil).JSON(t)["ProcVirtualization"].(map[string]any)
	if _, ok := one["attribute_type"]; ok {
		t.Errorf("registry fields shown at 1.73: %v", one)
	}

	// 1.74.
	items = e.must(http.StatusOK, "GET", base, "1.74", nil).JSON(t)["bios"].([]any)
	if d := cmp.Diff([]string{"created_at", "links", "name", "updated_at", "value"}, keys(items[0].(map[string]any))); d != "" {
		t.Errorf("1.74 default fields (-want +got):\n%s", d)
	}
	detail := e.must(http.StatusOK, "GET", base+"?detail=True", "1.74", nil).JSON(t)["bios"].([]any)
	wantKeys := []string{"allowable_values", "attribute_type", "created_at", "links", "lower_bound", "max_length", "min_length",
		"name", "read_only", "reset_required", "unique", "updated_at", "upper_bound", "value"}
	var virt map[string]any
	for _, it := range detail {
		m := it.(map[string]any)
		if d := cmp.Diff(wantKeys, keys(m)); d != "" {
			t.Errorf("detail fields (-want +got):\n%s", d)
		}
		if m["name"] == "ProcVirtualization" {
			virt = m
		}
	}
	if virt == nil || virt["attribute_type"] != "Enumeration" || virt["reset_required"] != true || virt["unique"] != nil ||
		!cmp.Equal(virt["allowable_values"], []any{"Enabled", "Disabled"}) || virt["value"] != "Enabled" {
		t.Errorf("ProcVirtualization in detail: %v", virt)
	}
	picked := e.must(http.StatusOK, "GET", base+"?fields=name,lower_bound", "1.74", nil).JSON(t)["bios"].([]any)
	if d := cmp.Diff([]string{"created_at", "links", "lower_bound", "name", "updated_at"}, keys(picked[0].(map[string]any))); d != "" {
		t.Errorf("?fields (-want +got):\n%s", d)
	}
	if got := e.must(http.StatusBadRequest, "GET", base+"?fields=name&detail=True", "1.74", nil).Fault(t); got != "Can not specify ?detail=True and fields in the same request." {
		t.Errorf("fields with detail: %q", got)
	}
	if got := e.must(http.StatusBadRequest, "GET", base+"?fields=colour", "1.74", nil).Fault(t); !strings.HasPrefix(got, "Schema error: 'colour' is not one of ['allowable_values', ") {
		t.Errorf("unknown field: %q", got)
	}
	// Ironic's query schema leaves upper_bound out of the enum: ?detail
	// shows it, ?fields cannot pick it.
	e.must(http.StatusBadRequest, "GET", base+"?fields=upper_bound", "1.74", nil)
	e.must(http.StatusBadRequest, "GET", base+"?detail=maybe", "1.74", nil)
	one = e.must(http.StatusOK, "GET", base+"/ProcCoreDisable", "1.74", nil).JSON(t)["ProcCoreDisable"].(map[string]any)
	if d := cmp.Diff(wantKeys, keys(one)); d != "" {
		t.Errorf("one setting at 1.74 (-want +got):\n%s", d)
	}
	if one["lower_bound"] != float64(0) || one["upper_bound"] != float64(32) || one["attribute_type"] != "Integer" {
		t.Errorf("ProcCoreDisable %v", one)
	}

	// apply_configuration through manual cleaning; the cache follows.
	clean := func(code int, steps ...map[string]any) resp {
		t.Helper()
		return e.must(code, "PUT", "/v1/nodes/"+id+"/states/provision", "1.74", map[string]any{"target": "clean", "clean_steps": steps})
	}
	if got := clean(http.StatusBadRequest, map[string]any{"interface": "bios", "step": "apply_configuration", "args": map[string]any{}}).Fault(t); got == "" {
		t.Error("apply_configuration without settings was accepted")
	}
	clean(http.StatusBadRequest, map[string]any{"interface": "bios", "step": "overclock"})
	clean(http.StatusAccepted, map[string]any{"interface": "bios", "step": "apply_configuration",
		"args": map[string]any{"settings": []any{map[string]any{"name": "ProcVirtualization", "value": "Disabled"}}}})
	waitProvision(t, e, id, "1.74", "manageable")
	one = e.must(http.StatusOK, "GET", base+"/ProcVirtualization", "1.74", nil).JSON(t)["ProcVirtualization"].(map[string]any)
	if one["value"] != "Disabled" || one["updated_at"] == nil {
		t.Errorf("after apply_configuration: %v", one)
	}
	clean(http.StatusAccepted, map[string]any{"interface": "bios", "step": "factory_reset"})
	waitProvision(t, e, id, "1.74", "manageable")
	if v := e.must(http.StatusOK, "GET", base+"/ProcVirtualization", "1.74", nil).JSON(t)["ProcVirtualization"].(map[string]any)["value"]; v != "Enabled" {
		t.Errorf("after factory_reset: %v", v)
	}

	// validate reports bios and firmware, as Ironic's (every interface).
	v := e.must(http.StatusOK, "GET", "/v1/nodes/"+id+"/validate", "1.74", nil).JSON(t)
	if b, f := v["bios"].(map[string]any), v["firmware"].(map[string]any); b["result"] != true || f["result"] != true {
		t.Errorf("validate bios %v, firmware %v", b, f)
	}

	// A node on no-bios: the step is refused before cleaning starts, as
	// Ironic's UnsupportedDriverExtension.
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "1.74", []map[string]any{{"op": "replace", "path": "/bios_interface", "value": "no-bios"}})
	if b := e.must(http.StatusOK, "GET", "/v1/nodes/"+id+"/validate", "1.74", nil).JSON(t)["bios"].(map[string]any); b["result"] != false || b["reason"] != "not supported" {
		t.Errorf("validate bios on no-bios: %v", b)
	}
	got := clean(http.StatusBadRequest, map[string]any{"interface": "bios", "step": "factory_reset"}).Fault(t)
	if got != "Driver fake-hardware does not support bios (disabled or not implemented)." {
		t.Errorf("bios step on no-bios: %q", got)
	}
	if n := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.74", nil).JSON(t); n["provision_state"] != "manageable" {
		t.Errorf("a refused clean moved the node: %v", n["provision_state"])
	}
}

// TestV1_86Firmware: GET /v1/nodes/{id}/firmware is 404 below 1.86 (as
// Ironic's node controller answers for the sub-resource); verifying a node
// caches its components (initial and current version); a firmware.update
// clean step flashes them and records last_version_flashed; ?fields picks
// fields, the 1.114 identity fields are refused, and so is an unknown
// query parameter.
func TestV1_86Firmware(t *testing.T) {
	TestV1_86FirmwareInterface(t)
	e := newEnv(t, withMaxAPI(maxAPI03), withRealConductor(t))
	id := e.node(nil)
	base := "/v1/nodes/" + id + "/firmware"
	e.must(http.StatusNotFound, "GET", base, "1.85", nil)
	if got := e.must(http.StatusOK, "GET", base, "1.86", nil).JSON(t)["firmware"].([]any); len(got) != 0 {
		t.Errorf("components before any read: %v", got)
	}
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id+"/states/provision", "1.86", map[string]any{"target": "manage"})
	waitProvision(t, e, id, "1.86", "manageable")
	list := func(q string) []map[string]any {
		t.Helper()
		var out []map[string]any
		for _, it := range e.must(http.StatusOK, "GET", base+q, "1.86", nil).JSON(t)["firmware"].([]any) {
			out = append(out, it.(map[string]any))
		}
		return out
	}
	comps := list("")
	if len(comps) != 2 || comps[0]["component"] != "bios" || comps[1]["component"] != "bmc" {
		t.Fatalf("components %v", comps)
	}
	if d := cmp.Diff([]string{"component", "created_at", "current_version", "initial_version", "last_version_flashed", "updated_at"}, keys(comps[0])); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
	if comps[0]["initial_version"] != "1.0.0" || comps[0]["current_version"] != "1.0.0" || comps[0]["last_version_flashed"] != nil {
		t.Errorf("bios before an update: %v", comps[0])
	}
	e.must(http.StatusBadRequest, "PUT", "/v1/nodes/"+id+"/states/provision", "1.86", map[string]any{"target": "clean",
		"clean_steps": []any{map[string]any{"interface": "firmware", "step": "update", "args": map[string]any{
			"settings": []any{map[string]any{"component": "disk", "url": "http://x/disk-2.bin"}}}}}})
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id+"/states/provision", "1.86", map[string]any{"target": "clean",
		"clean_steps": []any{map[string]any{"interface": "firmware", "step": "update", "args": map[string]any{
			"settings": []any{map[string]any{"component": "bios", "url": "http://images.example/bios-2.0.1.bin", "wait": 1}}}}}})
	waitProvision(t, e, id, "1.86", "manageable")
	comps = list("")
	if comps[0]["initial_version"] != "1.0.0" || comps[0]["current_version"] != "2.0.1" || comps[0]["last_version_flashed"] != "2.0.1" || comps[0]["updated_at"] == nil {
		t.Errorf("bios after the update: %v", comps[0])
	}
	if comps[1]["current_version"] != "1.0.0" || comps[1]["last_version_flashed"] != nil {
		t.Errorf("bmc after a bios update: %v", comps[1])
	}
	picked := list("?fields=component,current_version")
	if d := cmp.Diff([]string{"component", "created_at", "current_version", "updated_at"}, keys(picked[0])); d != "" {
		t.Errorf("?fields (-want +got):\n%s", d)
	}
	if got := e.must(http.StatusBadRequest, "GET", base+"?fields=vendor,model", "1.86", nil).Fault(t); got != "Fields model, vendor are not allowed in this API version. They require at least API version 1.114." {
		t.Errorf("identity fields: %q", got)
	}
	e.must(http.StatusBadRequest, "GET", base+"?fields=colour", "1.86", nil)
	e.must(http.StatusBadRequest, "GET", base+"?limit=1", "1.86", nil)
	if !slices.Contains(keys(e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.86", nil).JSON(t)), "firmware_interface") {
		t.Error("firmware_interface not shown at 1.86")
	}
}

// TestPinnedBIOSFirmware: pinned to release 0.2 (API 1.31), the registry
// fields (1.74) and the firmware resource (1.86) are 406, and the real
// conductor neither reads nor writes either cache when it verifies a node:
// BIOSSetting and FirmwareComponent are kinds of release 0.3.
func TestPinnedBIOSFirmware(t *testing.T) {
	old, ok := release.Default().Lookup("0.2")
	if !ok {
		t.Fatal("no release 0.2")
	}
	e := newEnvPinned(t, release.NewPinner(release.Default(), release.Pin{Mode: release.PinRelease, Release: old}),
		withMaxAPI(maxAPI03), withRealConductor(t))
	id := e.node(nil)
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes/"+id+"/bios?detail=True", "1.74", nil)
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes/"+id+"/firmware", "1.86", nil)
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id+"/states/provision", "1.31", map[string]any{"target": "manage"})
	waitProvision(t, e, id, "1.31", "manageable")
	for _, table := range []string{db.TableBIOSSettings, db.TableFirmwareComponents} {
		if n, err := e.store.DB().Bun().NewSelect().Table(table).Count(t.Context()); err != nil || n != 0 {
			t.Errorf("%s: %d rows (%v) written while pinned to 0.2", table, n, err)
		}
	}
}
