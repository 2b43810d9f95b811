package sim

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEveryLinkResolves walks the whole tree from the service root and checks
// that each resource answers 200 with its own @odata.id and an @odata.type,
// so no link points nowhere.
func TestEveryLinkResolves(t *testing.T) {
	g := newRig(t, Options{Systems: 2, Seed: 7})
	seen := map[string]bool{}
	queue := []string{"/redfish/v1/"}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		r := g.get(p)
		r.want(t, http.StatusOK, "")
		if got := str(r.body, "@odata.id"); got != p {
			t.Errorf("%s: @odata.id %q", p, got)
		}
		if !strings.HasPrefix(str(r.body, "@odata.type"), "#") {
			t.Errorf("%s: @odata.type %q", p, str(r.body, "@odata.type"))
		}
		for _, l := range odataIDs(r.body) {
			if !seen[l] {
				queue = append(queue, l)
			}
		}
	}
	// Two systems, each with system, manager, chassis and their sub-resources.
	for _, want := range []string{
		"/redfish/v1/Systems/node-1/Storage/1/Drives/Disk0",
		"/redfish/v1/Systems/node-0/EthernetInterfaces/NIC2",
		"/redfish/v1/Managers/BMC-node-1/VirtualMedia/Floppy",
		"/redfish/v1/Chassis/node-1",
		"/redfish/v1/Chassis/node-1/Thermal",
		"/redfish/v1/Chassis/node-0/Power",
		"/redfish/v1/AccountService/Accounts/1",
		"/redfish/v1/SessionService/Sessions",
	} {
		if !seen[want] {
			t.Errorf("crawl never reached %s", want)
		}
	}
}

// odataIDs collects every nested "@odata.id" except the object's own and
// fragments.
func odataIDs(m map[string]any) []string {
	var out []string
	var walk func(v any, top bool)
	walk = func(v any, top bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, vv := range x {
				// A fragment (Thermal#/Fans/0) names a member of the
				// resource it is in, as in the DMTF mockups.
				if s, ok := vv.(string); ok && k == "@odata.id" && !top && !strings.Contains(s, "#") {
					out = append(out, s)
				}
				walk(vv, false)
			}
		case []any:
			for _, vv := range x {
				walk(vv, false)
			}
		}
	}
	walk(m, true)
	return out
}

func TestResourceShapes(t *testing.T) {
	g := newRig(t, Options{Systems: 3, Seed: 42})
	tests := map[string]struct {
		path  string
		odata string // @odata.type
		check func(t *testing.T, b map[string]any)
	}{
		"root": {"/redfish/v1/", "#ServiceRoot.v1_15_0.ServiceRoot", func(t *testing.T, b map[string]any) {
			if str(b, "Links", "Sessions", "@odata.id") != sessionsPath {
				t.Errorf("Links.Sessions = %v", b["Links"])
			}
		}},
		"systems": {"/redfish/v1/Systems", "#ComputerSystemCollection.ComputerSystemCollection", func(t *testing.T, b map[string]any) {
			if got := odataIDs(b); !slices.Equal(got, []string{systemPath(0), systemPath(1), systemPath(2)}) {
				t.Errorf("members %v", got)
			}
			if b["Members@odata.count"] != float64(3) {
				t.Errorf("count %v", b["Members@odata.count"])
			}
		}},
		"system": {"/redfish/v1/Systems/node-2", "#ComputerSystem.v1_20_0.ComputerSystem", func(t *testing.T, b map[string]any) {
			if str(b, "Id") != "node-2" || str(b, "PowerState") != PowerOff {
				t.Errorf("Id %q PowerState %q", str(b, "Id"), str(b, "PowerState"))
			}
			boot := b["Boot"].(map[string]any)
			if diff := cmp.Diff([]any{"None", "Pxe", "Cd", "Usb", "Hdd", "BiosSetup", "UefiHttp"}, boot["BootSourceOverrideTarget@Redfish.AllowableValues"]); diff != "" {
				t.Errorf("boot allowable (-want +got):\n%s", diff)
			}
			reset := b["Actions"].(map[string]any)["#ComputerSystem.Reset"].(map[string]any)
			if diff := cmp.Diff([]any{"On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "Nmi", "PushPowerButton"}, reset["ResetType@Redfish.AllowableValues"]); diff != "" {
				t.Errorf("reset allowable (-want +got):\n%s", diff)
			}
			if reset["target"] != "/redfish/v1/Systems/node-2/Actions/ComputerSystem.Reset" {
				t.Errorf("reset target %v", reset["target"])
			}
			ps := b["ProcessorSummary"].(map[string]any)
			if ps["Count"].(float64) < 1 || str(ps, "Model") == "" {
				t.Errorf("ProcessorSummary %v", ps)
			}
			if str(b, "@odata.etag") == "" || !regexp.MustCompile(`^[0-9a-f-]{36}$`).MatchString(str(b, "UUID")) {
				t.Errorf("etag %q UUID %q", str(b, "@odata.etag"), str(b, "UUID"))
			}
			wantLinks := map[string]any{
				"Chassis":   []any{map[string]any{"@odata.id": "/redfish/v1/Chassis/node-2"}},
				"ManagedBy": []any{map[string]any{"@odata.id": "/redfish/v1/Managers/BMC-node-2"}},
			}
			if diff := cmp.Diff(wantLinks, b["Links"]); diff != "" {
				t.Errorf("Links (-want +got):\n%s", diff)
			}
		}},
		"nic": {"/redfish/v1/Systems/node-1/EthernetInterfaces/NIC1", "#EthernetInterface.v1_9_0.EthernetInterface", func(t *testing.T, b map[string]any) {
			if !regexp.MustCompile(`^02:[0-9a-f]{2}:00:00:01:00$`).MatchString(str(b, "MACAddress")) {
				t.Errorf("MACAddress %q", str(b, "MACAddress"))
			}
		}},
		"drive": {"/redfish/v1/Systems/node-0/Storage/1/Drives/Disk0", "#Drive.v1_17_0.Drive", func(t *testing.T, b map[string]any) {
			if b["CapacityBytes"].(float64) < 1e11 {
				t.Errorf("CapacityBytes %v", b["CapacityBytes"])
			}
		}},
		"manager": {"/redfish/v1/Managers/BMC-node-0", "#Manager.v1_17_0.Manager", func(t *testing.T, b map[string]any) {
			if str(b, "VirtualMedia", "@odata.id") != "/redfish/v1/Managers/BMC-node-0/VirtualMedia" || str(b, "ManagerType") != "BMC" {
				t.Errorf("manager %v", b)
			}
		}},
		"cd": {"/redfish/v1/Managers/BMC-node-0/VirtualMedia/Cd", "#VirtualMedia.v1_6_0.VirtualMedia", func(t *testing.T, b map[string]any) {
			if b["Inserted"] != false || b["Image"] != nil || str(b, "ConnectedVia") != "NotConnected" {
				t.Errorf("empty Cd %v", b)
			}
			if diff := cmp.Diff([]any{"CD", "DVD"}, b["MediaTypes"]); diff != "" {
				t.Error(diff)
			}
			acts := b["Actions"].(map[string]any)
			if _, ok := acts["#VirtualMedia.InsertMedia"]; !ok {
				t.Errorf("no InsertMedia action: %v", acts)
			}
		}},
		"chassis": {"/redfish/v1/Chassis/node-1", "#Chassis.v1_22_0.Chassis", nil},
		"session service": {"/redfish/v1/SessionService", "#SessionService.v1_1_8.SessionService", func(t *testing.T, b map[string]any) {
			if b["SessionTimeout"] != float64(1800) {
				t.Errorf("SessionTimeout %v", b["SessionTimeout"])
			}
		}},
		"account": {"/redfish/v1/AccountService/Accounts/1", "#ManagerAccount.v1_10_0.ManagerAccount", func(t *testing.T, b map[string]any) {
			if str(b, "UserName") != DefaultUsername || b["Password"] != nil {
				t.Errorf("account %v", b)
			}
		}},
		"trailing slash": {"/redfish/v1/Systems/", "#ComputerSystemCollection.ComputerSystemCollection", nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := g.get(tc.path)
			r.want(t, http.StatusOK, "")
			if got := str(r.body, "@odata.type"); got != tc.odata {
				t.Errorf("@odata.type %q, want %q", got, tc.odata)
			}
			if r.header.Get("OData-Version") != "4.0" || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
				t.Errorf("headers %v", r.header)
			}
			if tc.check != nil {
				tc.check(t, r.body)
			}
		})
	}
}

// TestHardwareIsDeterministic: the same seed gives the same fleet, another
// seed a different one, and memory and disks add up across resources.
func TestHardwareIsDeterministic(t *testing.T) {
	a, b, c := newRig(t, Options{Systems: 5, Seed: 1}), newRig(t, Options{Systems: 5, Seed: 1}), newRig(t, Options{Systems: 5, Seed: 2})
	for i := range 5 {
		p := fmt.Sprintf("/redfish/v1/Systems/node-%d", i)
		ra, rb := a.get(p), b.get(p)
		if diff := cmp.Diff(ra.body, rb.body); diff != "" {
			t.Errorf("%s differs between equal seeds:\n%s", p, diff)
		}
		if str(ra.body, "UUID") == str(c.get(p).body, "UUID") {
			t.Errorf("%s: seeds 1 and 2 gave the same UUID", p)
		}
		mem := a.get(p + "/Memory")
		var total float64
		for _, m := range odataIDs(mem.body) {
			total += a.get(m).body["CapacityMiB"].(float64)
		}
		if want := ra.body["MemorySummary"].(map[string]any)["TotalSystemMemoryGiB"].(float64); total != want*1024 {
			t.Errorf("%s: DIMMs add up to %v MiB, summary says %v GiB", p, total, want)
		}
		if a.get(p + "/EthernetInterfaces/NIC1").body["MACAddress"] == c.get(p + "/EthernetInterfaces/NIC1").body["MACAddress"] {
			t.Errorf("%s: seeds 1 and 2 gave the same MAC", p)
		}
	}
}

func TestNotFoundAndMethod(t *testing.T) {
	g := newRig(t, Options{Systems: 2})
	tests := map[string]struct {
		method, path string
		status       int
		id           string
	}{
		"unknown system":       {"GET", "/redfish/v1/Systems/node-2", 404, "ResourceMissingAtURI"},
		"non-canonical id":     {"GET", "/redfish/v1/Systems/node-01", 404, "ResourceMissingAtURI"},
		"unknown manager":      {"GET", "/redfish/v1/Managers/node-0", 404, "ResourceMissingAtURI"},
		"unknown slot":         {"GET", "/redfish/v1/Managers/BMC-node-0/VirtualMedia/Dvd", 404, "ResourceMissingAtURI"},
		"unknown cpu":          {"GET", "/redfish/v1/Systems/node-0/Processors/CPU9", 404, "ResourceMissingAtURI"},
		"unknown path":         {"GET", "/redfish/v1/Nope", 404, "ResourceMissingAtURI"},
		"delete system":        {"DELETE", "/redfish/v1/Systems/node-0", 405, "GeneralError"},
		"get reset action":     {"GET", "/redfish/v1/Systems/node-0/Actions/ComputerSystem.Reset", 405, "GeneralError"},
		"unknown session":      {"GET", "/redfish/v1/SessionService/Sessions/abc", 404, "ResourceMissingAtURI"},
		"patch malformed json": {"PATCH", "/redfish/v1/Systems/node-0", 400, "MalformedJSON"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var body any
			if tc.method == "PATCH" {
				body = "{nope"
			}
			r := g.do(tc.method, tc.path, admin, body)
			r.want(t, tc.status, tc.id)
			if tc.status == 405 && r.header.Get("Allow") == "" {
				t.Error("405 without Allow")
			}
		})
	}
}
