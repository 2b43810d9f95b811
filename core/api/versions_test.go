package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
)

// versionTests names, for every microversion Rivet claims, the test that
// proves what that version changed (reference §8). TestEveryClaimedVersionHasATest
// fails when HEAD claims a version without an entry.
var versionTests = map[string]string{
	"1.1":   "TestV1_1Baseline",
	"1.2":   "TestV1_2AvailableWasNull",
	"1.3":   "TestNodeFieldsPerVersion/1.3",
	"1.4":   "TestVerbGates",
	"1.5":   "TestV1_5NodeNames",
	"1.6":   "TestVerbGates",
	"1.7":   "TestNodeFieldsPerVersion/1.7",
	"1.8":   "TestFieldsParameter",
	"1.9":   "TestNodeListFilters",
	"1.10":  "TestV1_10NameCharacters",
	"1.11":  "TestV1_11NewNodesEnroll",
	"1.12":  "TestV1_12RAID",
	"1.13":  "TestVerbGates",
	"1.14":  "TestNodeFieldsPerVersion/1.14",
	"1.15":  "TestVerbGates",
	"1.16":  "TestNodeListFilters",
	"1.17":  "TestVerbGates",
	"1.18":  "TestPortFieldsPerVersion",
	"1.19":  "TestPortFieldsPerVersion",
	"1.20":  "TestNodeFieldsPerVersion/1.20",
	"1.21":  "TestNodeListFilters",
	"1.22":  "TestV1_22Ramdisk",
	"1.23":  "TestV1_23Portgroups",
	"1.24":  "TestV1_24SubCollections",
	"1.25":  "TestV1_25UnsetChassis",
	"1.26":  "TestV1_26PortgroupModeProperties",
	"1.27":  "TestV1_27SoftPower",
	"1.28":  "TestV1_28NodeVIFs",
	"1.29":  "TestV1_29InjectNMI",
	"1.30":  "TestV1_30DynamicDrivers",
	"1.31":  "TestV1_31NodeInterfaces",
	"1.32":  "TestV1_32Volume",
	"1.33":  "TestV1_33StorageInterface",
	"1.34":  "TestV1_34PortPhysicalNetwork",
	"1.35":  "TestV1_35RebuildConfigdrive",
	"1.36":  "TestV1_36HeartbeatAgentVersion",
	"1.37":  "TestV1_37NodeTraits",
	"1.38":  "TestV1_38Rescue",
	"1.39":  "TestV1_39InspectingNotPatchable",
	"1.40":  "TestV1_40BIOS",
	"1.41":  "TestAgentInspectionFailures",
	"1.42":  "TestV1_42Fault",
	"1.43":  "TestV1_43Detail",
	"1.44":  "TestV1_44DeployStep",
	"1.45":  "TestV1_45ResetInterfaces",
	"1.46":  "TestV1_46ConductorGroup",
	"1.47":  "TestV1_47AutomatedClean",
	"1.48":  "TestV1_48Protected",
	"1.49":  "TestV1_49Conductors",
	"1.50":  "TestV1_50NodeOwner",
	"1.51":  "TestV1_51Description",
	"1.52":  "TestV1_52Allocations",
	"1.53":  "TestV1_53PortSmartNIC",
	"1.54":  "TestV1_54Events",
	"1.55":  "TestV1_55DeployTemplates",
	"1.56":  "TestV1_56BuildConfigdrive",
	"1.57":  "TestV1_57AllocationPatch",
	"1.58":  "TestV1_58AllocationBackfill",
	"1.59":  "TestV1_56BuildConfigdrive",
	"1.60":  "TestV1_60AllocationOwner",
	"1.61":  "TestV1_61Retired",
	"1.62":  "TestV1_62AgentToken",
	"1.63":  "TestV1_63Indicators",
	"1.64":  "TestV1_64LocalLinkNetworkType",
	"1.65":  "TestV1_65NodeLessee",
	"1.66":  "TestV1_66NodeNetworkData",
	"1.67":  "TestV1_67VIFPortSelection",
	"1.68":  "TestV1_68HeartbeatVerifyCA",
	"1.69":  "TestV1_69DeploySteps",
	"1.70":  "TestV1_70CleanDisableRamdisk",
	"1.71":  "TestV1_71ScopedRoles",
	"1.72":  "TestV1_72HeartbeatStatus",
	"1.73":  "TestV1_73DeployUndeploy",
	"1.74":  "TestV1_74BIOSRegistry",
	"1.75":  "TestV1_75BootMode",
	"1.76":  "TestV1_76SetBootModeAndSecureBoot",
	"1.77":  "TestV1_77DriverFields",
	"1.78":  "TestV1_78NodeHistory",
	"1.79":  "TestV1_79AllocationPrefersName",
	"1.80":  "TestV1_80SelfServiceNodes",
	"1.81":  "TestAgentInspectionThroughRealConductor",
	"1.82":  "TestV1_82Shards",
	"1.83":  "TestV1_83ChildNodes",
	"1.84":  "TestAgentInspectionFailures",
	"1.85":  "TestV1_85Unhold",
	"1.86":  "TestV1_86Firmware",
	"1.87":  "TestV1_87Service",
	"1.88":  "TestV1_88PortName",
	"1.89":  "TestV1_89VirtualMedia",
	"1.90":  "TestV1_90OVNVTEP",
	"1.91":  "TestV1_91JSONSuffix",
	"1.92":  "TestV1_92Runbooks",
	"1.93":  "TestV1_93GophercloudVirtualMedia",
	"1.94":  "TestV1_94PortNodeIdent",
	"1.95":  "TestV1_95DisablePowerOff",
	"1.96":  "TestV1_96InspectionRules",
	"1.97":  "TestV1_97PortDescription",
	"1.98":  "TestV1_98PatchEscapes",
	"1.99":  "TestV1_99ConductorGroupsFilter",
	"1.100": "TestV1_100PortVendor",
	"1.101": "TestV1_101PortCategory",
	"1.102": "TestV1_102PortgroupPhysicalNetwork",
	"1.103": "TestV1_103PortgroupCategory",
	"1.104": "TestV1_104InstanceName",
	"1.105": "TestV1_90OVNVTEP",
	"1.106": "TestV1_106PortgroupShard",
	"1.107": "TestV1_107RequestID",
	"1.108": "TestV1_108ServiceDisableRamdisk",
	"1.109": "TestV1_109Health",
	"1.110": "TestV1_110DeployWaitAbort",
}

func TestEveryClaimedVersionHasATest(t *testing.T) {
	defined := testFuncs(t)
	head := release.Default().Head().API
	for minor := release.MinAPI.Minor; minor <= head.Minor; minor++ {
		v := version.Version{Major: 1, Minor: minor}
		name := versionTests[v.String()]
		if name == "" {
			t.Errorf("HEAD claims API %s but versionTests has no test for it", v)
			continue
		}
		if fn, _, _ := strings.Cut(name, "/"); !defined[fn] {
			t.Errorf("versionTests names %s for API %s, but no such test exists", name, v)
		}
	}
}

// testFuncs lists the Test functions of this package's test files.
func testFuncs(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") {
				out[fd.Name.Name] = true
			}
		}
	}
	return out
}

func TestNodeFieldsPerVersion(t *testing.T) {
	e := newEnv(t)
	id := e.node(nil)
	base := []string{"chassis_uuid", "console_enabled", "created_at", "driver", "driver_info", "extra",
		"instance_info", "instance_uuid", "last_error", "links", "maintenance", "maintenance_reason",
		"power_state", "ports", "properties", "provision_state", "provision_updated_at", "reservation",
		"target_power_state", "target_provision_state", "updated_at", "uuid"}
	add := map[string][]string{
		"1.3": {"driver_internal_info"}, "1.5": {"name"}, "1.6": {"inspection_finished_at", "inspection_started_at"},
		"1.7": {"clean_step"}, "1.12": {"raid_config", "target_raid_config"}, "1.14": {"states"},
		"1.20": {"network_interface"}, "1.21": {"resource_class"}, "1.24": {"portgroups"},
		"1.31": {"boot_interface", "console_interface", "deploy_interface", "inspect_interface",
			"management_interface", "power_interface", "raid_interface", "vendor_interface"},
		"1.32": {"volume"}, "1.33": {"storage_interface"}, "1.37": {"traits"}, "1.38": {"rescue_interface"},
		"1.40": {"bios_interface"}, "1.42": {"fault"}, "1.44": {"deploy_step"}, "1.46": {"conductor_group"},
		"1.47": {"automated_clean"}, "1.48": {"protected", "protected_reason"}, "1.49": {"conductor"},
		"1.50": {"owner"}, "1.51": {"description"}, "1.52": {"allocation_uuid"}, "1.61": {"retired", "retired_reason"},
		"1.65": {"lessee"}, "1.66": {"network_data"}, "1.75": {"boot_mode", "secure_boot"}, "1.82": {"shard"}, "1.83": {"parent_node"},
		"1.86": {"firmware_interface"}, "1.87": {"service_step"}, "1.95": {"disable_power_off"}, "1.104": {"instance_name"}, "1.109": {"health"},
	}
	want := map[string]bool{}
	for _, f := range base {
		want[f] = true
	}
	for minor := 1; minor <= release.Default().Head().API.Minor; minor++ {
		v := version.Version{Major: 1, Minor: minor}.String()
		for _, f := range add[v] {
			want[f] = true
		}
		t.Run(v, func(t *testing.T) {
			got := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, v, nil).JSON(t)
			gotKeys := map[string]bool{}
			for k := range got {
				gotKeys[k] = true
			}
			if d := cmp.Diff(want, gotKeys); d != "" {
				t.Errorf("fields at %s (-want +got):\n%s", v, d)
			}
		})
	}
}

func TestV1_1Baseline(t *testing.T) {
	e := newEnv(t)
	r := e.must(http.StatusCreated, "POST", "/v1/nodes", "", map[string]any{"driver": "fake-hardware"})
	if r.Header.Get(HeaderVersion) != "1.1" {
		t.Errorf("no header negotiated %q, want 1.1", r.Header.Get(HeaderVersion))
	}
	id := r.JSON(t)["uuid"].(string)
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id+"/maintenance", "", map[string]any{"reason": "fan"})
	got := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "", nil).JSON(t)
	if got["maintenance"] != true || got["maintenance_reason"] != "fan" {
		t.Errorf("maintenance = %v, %v", got["maintenance"], got["maintenance_reason"])
	}
	e.must(http.StatusAccepted, "DELETE", "/v1/nodes/"+id+"/maintenance", "", nil)
	got = e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "", nil).JSON(t)
	if got["maintenance"] != false || got["maintenance_reason"] != nil {
		t.Errorf("after DELETE maintenance = %v, %v", got["maintenance"], got["maintenance_reason"])
	}
	e.must(http.StatusOK, "GET", "/v1/nodes/"+id+"/vendor_passthru/methods", "", nil)
}

func TestV1_2AvailableWasNull(t *testing.T) {
	e := newEnv(t)
	id := e.must(http.StatusCreated, "POST", "/v1/nodes", "1.1", map[string]any{"driver": "fake-hardware"}).JSON(t)["uuid"].(string)
	for ver, want := range map[string]any{"1.1": nil, "1.2": "available"} {
		if got := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, ver, nil).JSON(t)["provision_state"]; got != want {
			t.Errorf("@%s provision_state = %v, want %v", ver, got, want)
		}
	}
}

func TestV1_5NodeNames(t *testing.T) {
	e := newEnv(t)
	e.must(http.StatusNotAcceptable, "POST", "/v1/nodes", "1.4", map[string]any{"driver": "fake-hardware", "name": "n1"})
	e.must(http.StatusCreated, "POST", "/v1/nodes", "1.5", map[string]any{"driver": "fake-hardware", "name": "n1"})
	if got := e.must(http.StatusNotFound, "GET", "/v1/nodes/n1", "1.4", nil).Fault(t); got != "Node n1 could not be found." {
		t.Errorf("by name at 1.4: %q", got)
	}
	e.must(http.StatusOK, "GET", "/v1/nodes/n1", "1.5", nil)
	if got := e.must(http.StatusBadRequest, "GET", "/v1/nodes/bad%20name", "1.5", nil).Fault(t); got != "Expected a logical name or UUID but received bad name." {
		t.Errorf("invalid name: %q", got)
	}
	if got := e.must(http.StatusConflict, "POST", "/v1/nodes", "1.5", map[string]any{"driver": "fake-hardware", "name": "n1"}).Fault(t); got != "A node with name n1 already exists." {
		t.Errorf("duplicate: %q", got)
	}
}

func TestV1_10NameCharacters(t *testing.T) {
	e := newEnv(t)
	body := map[string]any{"driver": "fake-hardware", "name": "Rack_1~a"}
	if got := e.must(http.StatusBadRequest, "POST", "/v1/nodes", "1.9", body).Fault(t); got != "Cannot create node with invalid name 'Rack_1~a'" {
		t.Errorf("1.9: %q", got)
	}
	e.must(http.StatusCreated, "POST", "/v1/nodes", "1.10", body)
}

func TestV1_11NewNodesEnroll(t *testing.T) {
	e := newEnv(t)
	for ver, want := range map[string]string{"1.10": "available", "1.11": "enroll"} {
		got := e.must(http.StatusCreated, "POST", "/v1/nodes", ver, map[string]any{"driver": "fake-hardware"}).JSON(t)
		if got["provision_state"] != want {
			t.Errorf("@%s new node is %v, want %s", ver, got["provision_state"], want)
		}
	}
}

func TestV1_12RAID(t *testing.T) {
	e := newEnv(t)
	id := e.node(nil)
	e.must(http.StatusNotAcceptable, "PUT", "/v1/nodes/"+id+"/states/raid", "1.11", map[string]any{})
	got := e.must(http.StatusNotFound, "PUT", "/v1/nodes/"+id+"/states/raid", "1.12", map[string]any{"logical_disks": []any{}}).Fault(t)
	if got != "Driver fake-hardware does not support raid (disabled or not implemented)." {
		t.Errorf("raid: %q", got)
	}
	e.must(http.StatusNotAcceptable, "GET", "/v1/drivers/fake-hardware/raid/logical_disk_properties", "1.11", nil)
	e.must(http.StatusNotFound, "GET", "/v1/drivers/fake-hardware/raid/logical_disk_properties", "1.12", nil)
}

func TestVerbGates(t *testing.T) {
	tests := map[string]struct {
		setup  []string // verbs at latest first
		verb   string
		body   map[string]any
		below  string
		at     string
		status int // at `at`
	}{
		"manage 1.4":   {verb: "manage", below: "1.3", at: "1.4", status: http.StatusAccepted},
		"provide 1.4":  {setup: []string{"manage"}, verb: "provide", below: "1.3", at: "1.4", status: http.StatusAccepted},
		"inspect 1.6":  {setup: []string{"manage"}, verb: "inspect", below: "1.5", at: "1.6", status: http.StatusAccepted},
		"abort 1.13":   {verb: "abort", below: "1.12", at: "1.13", status: http.StatusBadRequest}, // enroll: invalid
		"clean 1.15":   {setup: []string{"manage"}, verb: "clean", body: map[string]any{"clean_steps": []any{map[string]any{"interface": "deploy", "step": "erase_devices"}}}, below: "1.14", at: "1.15", status: http.StatusAccepted},
		"adopt 1.17":   {setup: []string{"manage"}, verb: "adopt", below: "1.16", at: "1.17", status: http.StatusAccepted},
		"deploy 1.73":  {verb: "deploy", below: "1.26", at: "latest", status: http.StatusNotAcceptable},
		"rescue 1.38":  {verb: "rescue", below: "1.37", at: "1.38", status: http.StatusBadRequest}, // from enroll: a state error
		"bogus target": {verb: "bogus", below: "", at: "latest", status: http.StatusBadRequest},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			id := e.node(nil)
			for _, v := range tc.setup {
				e.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id+"/states/provision", "latest", map[string]any{"target": v})
			}
			body := map[string]any{"target": tc.verb}
			for k, v := range tc.body {
				body[k] = v
			}
			if tc.below != "" {
				e.must(http.StatusNotAcceptable, "PUT", "/v1/nodes/"+id+"/states/provision", tc.below, body)
			}
			r := e.must(tc.status, "PUT", "/v1/nodes/"+id+"/states/provision", tc.at, body)
			if tc.status == http.StatusAccepted && r.Header.Get("Location") != "http://rivet.test/v1/nodes/"+id+"/states" {
				t.Errorf("Location = %q", r.Header.Get("Location"))
			}
		})
	}
}

func TestV1_25UnsetChassis(t *testing.T) {
	e := newEnv(t)
	ch := e.must(http.StatusCreated, "POST", "/v1/chassis", "latest", map[string]any{"description": "rack 1"}).JSON(t)["uuid"].(string)
	id := e.node(map[string]any{"chassis_uuid": ch})
	patch := []map[string]any{{"op": "remove", "path": "/chassis_uuid"}}
	e.must(http.StatusNotAcceptable, "PATCH", "/v1/nodes/"+id, "1.24", patch)
	got := e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "1.25", patch).JSON(t)
	if got["chassis_uuid"] != nil {
		t.Errorf("chassis_uuid = %v after remove", got["chassis_uuid"])
	}
}
