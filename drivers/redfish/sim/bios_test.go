package sim

import (
	"net/http"
	"testing"
	"time"
)

// TestBiosSettingsApplyOnReset: a PATCH of the settings object is checked
// against the registry, shows only in the settings object, and is in
// force after the next boot; ResetBios restores the defaults likewise.
func TestBiosSettingsApplyOnReset(t *testing.T) {
	g := newRig(t, Options{})
	bios := node0 + "/Bios"
	b := g.get(bios)
	b.want(t, http.StatusOK, "")
	if got := b.body["Attributes"].(map[string]any)["ProcVirtualization"]; got != "Enabled" {
		t.Fatalf("default ProcVirtualization %v", got)
	}
	settings := str(b.body, "@Redfish.Settings", "SettingsObject", "@odata.id")
	if settings != bios+"/Settings" {
		t.Fatalf("SettingsObject %q", settings)
	}
	for _, bad := range []struct {
		attrs map[string]any
		id    string
	}{
		{map[string]any{"Colour": "Blue"}, "PropertyUnknown"},
		{map[string]any{"SystemSerial": "X"}, "PropertyNotWritable"},
		{map[string]any{"ProcVirtualization": "Maybe"}, "PropertyValueNotInList"},
		{map[string]any{"ProcCoreDisable": 99}, "PropertyValueOutOfRange"},
		{map[string]any{"PxeIpv6": "yes"}, "PropertyValueTypeError"},
	} {
		g.do(http.MethodPatch, settings, admin, map[string]any{"Attributes": bad.attrs}).want(t, http.StatusBadRequest, bad.id)
	}
	g.do(http.MethodPatch, bios, admin, map[string]any{"Attributes": map[string]any{"ProcVirtualization": "Disabled"}}).
		want(t, http.StatusMethodNotAllowed, "GeneralError")
	etag := str(g.get(settings).body, "@odata.etag")
	g.do(http.MethodPatch, settings, admin, map[string]any{"Attributes": map[string]any{"ProcVirtualization": "Disabled", "ProcCoreDisable": 2}},
		"If-Match", etag).want(t, http.StatusNoContent, "")
	g.do(http.MethodPatch, settings, admin, map[string]any{"Attributes": map[string]any{"ProcTurboMode": "Disabled"}},
		"If-Match", etag).want(t, http.StatusPreconditionFailed, "PreconditionFailed")
	if got := g.get(settings).body["Attributes"].(map[string]any)["ProcVirtualization"]; got != "Disabled" {
		t.Errorf("pending value %v", got)
	}
	if got := g.get(bios).body["Attributes"].(map[string]any)["ProcVirtualization"]; got != "Enabled" {
		t.Errorf("a pending value is in force before a reset: %v", got)
	}
	g.resetTo("On").want(t, http.StatusNoContent, "")
	attrs := g.get(bios).body["Attributes"].(map[string]any)
	if attrs["ProcVirtualization"] != "Disabled" || attrs["ProcCoreDisable"] != float64(2) {
		t.Errorf("after the boot: %v", attrs)
	}
	g.do(http.MethodPost, bios+"/Actions/Bios.ResetBios", admin, map[string]any{}).want(t, http.StatusNoContent, "")
	if got := g.get(bios).body["ResetBiosToDefaultsPending"]; got != true {
		t.Errorf("ResetBiosToDefaultsPending %v", got)
	}
	g.resetTo("ForceRestart").want(t, http.StatusNoContent, "")
	if got := g.get(bios).body["Attributes"].(map[string]any)["ProcVirtualization"]; got != "Enabled" {
		t.Errorf("after ResetBios and a boot: %v", got)
	}

	// The registry is found from the Registries collection by the Bios's
	// AttributeRegistry name.
	reg := g.get("/redfish/v1/Registries")
	file := reg.body["Members"].([]any)[0].(map[string]any)["@odata.id"].(string)
	f := g.get(file)
	if str(f.body, "Registry") != str(b.body, "AttributeRegistry") {
		t.Fatalf("registry file %v does not name %s", f.body, str(b.body, "AttributeRegistry"))
	}
	uri := f.body["Location"].([]any)[0].(map[string]any)["Uri"].(string)
	entries := g.get(uri).body["RegistryEntries"].(map[string]any)["Attributes"].([]any)
	if len(entries) != len(biosAttrs) {
		t.Fatalf("%d registry entries", len(entries))
	}
}

// TestSimpleUpdateTask: SimpleUpdate makes a Task that completes after
// UpdateDuration on the simulator's clock; a BMC image is in force at
// once, a BIOS image after the next boot; a versionless image fails.
func TestSimpleUpdateTask(t *testing.T) {
	clock := newClock()
	g := newRig(t, Options{Now: clock.Now, UpdateDuration: time.Minute})
	action := "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"
	g.do(http.MethodPost, action, admin, map[string]any{"ImageURI": "ftp://x/bios-2.0.bin"}).want(t, http.StatusBadRequest, "ActionParameterValueFormatError")
	g.do(http.MethodPost, action, admin, map[string]any{}).want(t, http.StatusBadRequest, "ActionParameterMissing")
	g.do(http.MethodPost, action, admin, map[string]any{"ImageURI": "http://x/bios-2.0.bin", "Targets": []string{"/redfish/v1/Nope"}}).
		want(t, http.StatusBadRequest, "ActionParameterNotSupported")

	r := g.do(http.MethodPost, action, admin, map[string]any{"ImageURI": "http://images/bios-2.1.0.bin",
		"Targets": []string{"/redfish/v1/UpdateService/FirmwareInventory/BIOS-node-0"}})
	r.want(t, http.StatusAccepted, "")
	taskURI := r.header.Get("Location")
	if st := str(g.get(taskURI).body, "TaskState"); st != "Running" {
		t.Fatalf("task state %s", st)
	}
	bmc := g.do(http.MethodPost, action, admin, map[string]any{"ImageURI": "https://images/bmc-3.0.hpm",
		"Targets": []string{"/redfish/v1/UpdateService/FirmwareInventory/BMC-node-0"}})
	bmc.want(t, http.StatusAccepted, "")
	bad := g.do(http.MethodPost, action, admin, map[string]any{"ImageURI": "http://images/bios.bin"})
	bad.want(t, http.StatusAccepted, "")
	clock.Add(time.Minute)
	if st := str(g.get(taskURI).body, "TaskState"); st != "Completed" {
		t.Fatalf("task state after its time %s", st)
	}
	if st := str(g.get(bad.header.Get("Location")).body, "TaskState"); st != "Exception" {
		t.Fatalf("a versionless image's task %s", st)
	}
	if v := str(g.get("/redfish/v1/UpdateService/FirmwareInventory/BMC-node-0").body, "Version"); v != "3.0" {
		t.Errorf("BMC version %s", v)
	}
	if v := str(g.get(managersPath+"/BMC-node-0").body, "FirmwareVersion"); v != "3.0" {
		t.Errorf("manager FirmwareVersion %s", v)
	}
	if v := str(g.get(node0).body, "BiosVersion"); v != defaultBIOSVersion {
		t.Errorf("the BIOS image is in force before a boot: %s", v)
	}
	g.resetTo("On").want(t, http.StatusNoContent, "")
	if v := str(g.get("/redfish/v1/UpdateService/FirmwareInventory/BIOS-node-0").body, "Version"); v != "2.1.0" {
		t.Errorf("BIOS version after the boot %s", v)
	}
}
