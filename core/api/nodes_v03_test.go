package api

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
)

// The node fields, filters and verbs of API 1.33-1.109, each proved at the
// version below (refused or hidden, as Ironic) and at its version.

const maxAPI03 = "1.110"

// below is the microversion before ver.
func below(ver string) string {
	v := version.MustParse(ver)
	v.Minor--
	return v.String()
}

// fieldGate checks that field is hidden below since (and ?fields= of it
// 406) and shown at since, returning its value there.
func fieldGate(t *testing.T, e *env, id, field, since string) any {
	t.Helper()
	if _, ok := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, below(since), nil).JSON(t)[field]; ok {
		t.Errorf("%s shown at %s", field, below(since))
	}
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes/"+id+"?fields="+field, below(since), nil)
	got := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, since, nil).JSON(t)
	val, ok := got[field]
	if !ok {
		t.Fatalf("%s not shown at %s", field, since)
	}
	if sel := e.must(http.StatusOK, "GET", "/v1/nodes/"+id+"?fields="+field, since, nil).JSON(t); len(sel) != 2 {
		t.Errorf("?fields=%s at %s = %v", field, since, sel)
	}
	return val
}

// filterGate checks that ?query is 406 with Ironic's message below since
// and answers 200 at since, returning the UUIDs listed.
func filterGate(t *testing.T, e *env, query, since string) []string {
	t.Helper()
	r := e.must(http.StatusNotAcceptable, "GET", "/v1/nodes?"+query, below(since), nil)
	if want := "Request not acceptable. The minimal required API version should be " + since; r.Fault(t) != want {
		t.Errorf("?%s at %s: %q, want %q", query, below(since), r.Fault(t), want)
	}
	return listUUIDs(t, e, "/v1/nodes?"+query, since)
}

func listUUIDs(t *testing.T, e *env, path, ver string) []string {
	t.Helper()
	var out []string
	for _, it := range e.must(http.StatusOK, "GET", path, ver, nil).JSON(t)["nodes"].([]any) {
		out = append(out, it.(map[string]any)["uuid"].(string))
	}
	slices.Sort(out)
	return out
}

// setNode changes a stored node directly, as a conductor would.
func setNode(t *testing.T, e *env, id string, f func(n *objects.Node)) {
	t.Helper()
	n, err := e.store.GetNode(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	f(n)
	if err := e.store.Save(context.Background(), n); err != nil {
		t.Fatal(err)
	}
}

func patchOp1(op, path string, value any) []map[string]any {
	m := map[string]any{"op": op, "path": path}
	if op != "remove" {
		m["value"] = value
	}
	return []map[string]any{m}
}

func TestV1_33StorageInterface(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := e.node(nil)
	if got := fieldGate(t, e, id, "storage_interface", "1.33"); got != "noop" {
		t.Errorf("storage_interface = %v, want noop (every hardware type's default)", got)
	}
	body := map[string]any{"driver": "fake-hardware", "storage_interface": "noop"}
	e.must(http.StatusNotAcceptable, "POST", "/v1/nodes", "1.32", body)
	e.must(http.StatusCreated, "POST", "/v1/nodes", "1.33", body)
	body["storage_interface"] = "cinder"
	e.must(http.StatusBadRequest, "POST", "/v1/nodes", "1.33", body)
	e.must(http.StatusNotAcceptable, "PATCH", "/v1/nodes/"+id, "1.32", patchOp1("replace", "/storage_interface", "noop"))
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "1.33", patchOp1("replace", "/storage_interface", "noop"))
	for ver, want := range map[string]bool{"1.32": false, "1.33": true} {
		d := e.must(http.StatusOK, "GET", "/v1/drivers/fake-hardware", ver, nil).JSON(t)
		if _, ok := d["default_storage_interface"]; ok != want {
			t.Errorf("driver at %s: default_storage_interface shown %v", ver, ok)
		}
		if want && d["default_storage_interface"] != "noop" {
			t.Errorf("default_storage_interface = %v", d["default_storage_interface"])
		}
	}
}

// activeNode creates a node and moves it to active at latest.
func activeNode(t *testing.T, e *env, fields map[string]any) string {
	t.Helper()
	id := e.node(fields)
	for _, verb := range []string{"manage", "provide", "active"} {
		e.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id+"/states/provision", maxAPI03, map[string]any{"target": verb})
	}
	return id
}

func TestV1_38Rescue(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := activeNode(t, e, nil)
	if got := fieldGate(t, e, id, "rescue_interface", "1.38"); got != "no-rescue" {
		t.Errorf("rescue_interface = %v, want no-rescue", got)
	}
	prov := "/v1/nodes/" + id + "/states/provision"
	rescue := map[string]any{"target": "rescue", "rescue_password": "s3cret"}
	e.must(http.StatusNotAcceptable, "PUT", prov, "1.37", rescue)
	e.must(http.StatusNotAcceptable, "PUT", prov, "1.37", map[string]any{"target": "unrescue"})
	faults := map[string]struct {
		body map[string]any
		want string
	}{
		"no password":    {map[string]any{"target": "rescue"}, `A non-empty "rescue_password" is required when setting target provision state to rescue`},
		"blank password": {map[string]any{"target": "rescue", "rescue_password": "  "}, `A non-empty "rescue_password" is required when setting target provision state to rescue`},
		"no-rescue": {rescue, "Failed to rescue instance None for node " + id +
			": Validation failed: Driver fake-hardware does not support rescue (disabled or not implemented)."},
		"unrescue from active": {map[string]any{"target": "unrescue"},
			`The requested action "unrescue" can not be performed on node "` + id + `" while it is in state "active".`},
		"password elsewhere": {map[string]any{"target": "rebuild", "rescue_password": "x"}, `"rescue_password" is only valid when setting target provision state to rescue`},
	}
	for name, tc := range faults {
		t.Run(name, func(t *testing.T) {
			if got := e.must(http.StatusBadRequest, "PUT", prov, "1.38", tc.body).Fault(t); got != tc.want {
				t.Errorf("fault %q, want %q", got, tc.want)
			}
		})
	}
	// An enrolled node cannot be rescued: the state machine says so first.
	other := e.node(nil)
	e.must(http.StatusBadRequest, "PUT", "/v1/nodes/"+other+"/states/provision", "1.38", rescue)
	// The rescue states are states the API knows.
	e.must(http.StatusOK, "GET", "/v1/nodes?provision_state=rescue%20wait", "1.38", nil)
}

func TestV1_40BIOSInterface(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := e.node(nil)
	if got := fieldGate(t, e, id, "bios_interface", "1.40"); got != "no-bios" {
		t.Errorf("bios_interface = %v, want no-bios", got)
	}
	e.must(http.StatusNotAcceptable, "POST", "/v1/nodes", "1.39", map[string]any{"driver": "fake-hardware", "bios_interface": "no-bios"})
}

func TestV1_42Fault(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id, other := e.node(nil), e.node(nil)
	if got := fieldGate(t, e, id, "fault", "1.42"); got != nil {
		t.Errorf("fault = %v, want null", got)
	}
	setNode(t, e, id, func(n *objects.Node) {
		n.Maintenance, n.Fault = true, ptrTo(objects.FaultCleanFailure)
	})
	if got := filterGate(t, e, "fault=clean%20failure", "1.42"); !slices.Equal(got, []string{id}) {
		t.Errorf("?fault=clean failure listed %v, want [%s] (not %s)", got, id, other)
	}
	r := e.must(http.StatusBadRequest, "GET", "/v1/nodes?fault=bogus", "1.42", nil)
	if want := `Unrecognized fault "bogus" is specified, allowed faults are ('power failure', 'clean failure', 'rescue abort failure', 'service failure')`; r.Fault(t) != want {
		t.Errorf("bad fault: %q", r.Fault(t))
	}
	e.must(http.StatusBadRequest, "POST", "/v1/nodes", "1.42", map[string]any{"driver": "fake-hardware", "fault": "x"})
}

func TestV1_43Detail(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	e.node(nil)
	for _, list := range []string{"/v1/nodes", "/v1/ports", "/v1/portgroups", "/v1/chassis"} {
		r := e.must(http.StatusBadRequest, "GET", list+"?detail=true", "1.42", nil)
		if r.Fault(t) != "Invalid query parameter ?detail=True received." {
			t.Errorf("%s at 1.42: %q", list, r.Fault(t))
		}
		e.must(http.StatusOK, "GET", list+"?detail=true", "1.43", nil)
		if got := e.must(http.StatusBadRequest, "GET", list+"?detail=true&fields=uuid", "1.43", nil).Fault(t); got != "Can not specify ?detail=True and fields in the same request." {
			t.Errorf("%s detail with fields: %q", list, got)
		}
	}
	item := e.must(http.StatusOK, "GET", "/v1/nodes?detail=True", "1.43", nil).JSON(t)["nodes"].([]any)[0].(map[string]any)
	if _, ok := item["driver_info"]; !ok {
		t.Errorf("?detail=True item lacks driver_info: %v", item)
	}
	item = e.must(http.StatusOK, "GET", "/v1/nodes?detail=false", "1.43", nil).JSON(t)["nodes"].([]any)[0].(map[string]any)
	if _, ok := item["driver_info"]; ok {
		t.Errorf("?detail=false item has driver_info")
	}
}

func TestV1_44DeployStep(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := e.node(nil)
	if got, ok := fieldGate(t, e, id, "deploy_step", "1.44").(map[string]any); !ok || len(got) != 0 {
		t.Errorf("deploy_step = %v, want {}", got)
	}
	r := e.must(http.StatusBadRequest, "PATCH", "/v1/nodes/"+id, "1.44", patchOp1("replace", "/deploy_step", map[string]any{}))
	if !strings.HasPrefix(r.Fault(t), "Cannot patch /deploy_step.") {
		t.Errorf("deploy_step is read-only: %q", r.Fault(t))
	}
}

func TestV1_45ResetInterfaces(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := e.node(map[string]any{"inspect_interface": "no-inspect"})
	driver := patchOp1("replace", "/driver", "fake-hardware")
	e.must(http.StatusNotAcceptable, "PATCH", "/v1/nodes/"+id+"?reset_interfaces=true", "1.44", driver)
	r := e.must(http.StatusBadRequest, "PATCH", "/v1/nodes/"+id+"?reset_interfaces=true", "1.45", patchOp1("add", "/extra/a", "b"))
	if r.Fault(t) != "The reset_interfaces parameter can only be used when changing the node's driver." {
		t.Errorf("without a driver change: %q", r.Fault(t))
	}
	e.must(http.StatusBadRequest, "PATCH", "/v1/nodes/"+id+"?reset_interfaces=maybe", "1.45", driver)
	// The driver set to what it is does not change it: nothing is reset,
	// as in Ironic.
	got := e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id+"?reset_interfaces=true", "1.45", driver).JSON(t)
	if got["inspect_interface"] != "no-inspect" {
		t.Errorf("inspect_interface = %v, want no-inspect kept", got["inspect_interface"])
	}
	// A driver change resets the interfaces the patch does not set (the
	// fake conductor serves one hardware type, so this is the reset alone).
	n := &objects.Node{InspectInterface: ptrTo("no-inspect"), BootInterface: ptrTo("fake"), RescueInterface: ptrTo("no-rescue")}
	resetUnpatchedInterfaces(n, object{"driver": []byte(`"ipmi"`), "boot_interface": []byte(`"fake"`)})
	if n.InspectInterface != nil || n.RescueInterface != nil || n.BootInterface == nil {
		t.Errorf("after reset: inspect %v, rescue %v, boot %v", n.InspectInterface, n.RescueInterface, n.BootInterface)
	}
}

func TestV1_46ConductorGroup(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	body := map[string]any{"driver": "fake-hardware", "conductor_group": "Rack-1"}
	e.must(http.StatusNotAcceptable, "POST", "/v1/nodes", "1.45", body)
	// "" is conductor_group's empty value: accepted below 1.46, as Ironic.
	e.must(http.StatusCreated, "POST", "/v1/nodes", "1.45", map[string]any{"driver": "fake-hardware", "conductor_group": ""})
	id := e.must(http.StatusCreated, "POST", "/v1/nodes", "1.46", body).JSON(t)["uuid"].(string)
	if got := fieldGate(t, e, id, "conductor_group", "1.46"); got != "rack-1" {
		t.Errorf("conductor_group = %v, want rack-1 (lowercased)", got)
	}
	r := e.must(http.StatusBadRequest, "PATCH", "/v1/nodes/"+id, "1.46", patchOp1("replace", "/conductor_group", "a b"))
	if r.Fault(t) != "Expected a conductor group but received a b." {
		t.Errorf("invalid group: %q", r.Fault(t))
	}
	if got := filterGate(t, e, "conductor_group=RACK-1", "1.46"); !slices.Equal(got, []string{id}) {
		t.Errorf("?conductor_group=RACK-1 listed %v", got)
	}
	// Sorting by it is 406 below 1.46 too (Ironic's check_allowed_fields).
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes?sort_key=conductor_group", "1.45", nil)
	e.must(http.StatusOK, "GET", "/v1/nodes?sort_key=conductor_group", "1.46", nil)
}

func TestV1_47AutomatedClean(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := e.node(nil)
	if got := fieldGate(t, e, id, "automated_clean", "1.47"); got != nil {
		t.Errorf("automated_clean = %v, want null", got)
	}
	e.must(http.StatusNotAcceptable, "PATCH", "/v1/nodes/"+id, "1.46", patchOp1("replace", "/automated_clean", false))
	for _, v := range []any{false, "true", nil} {
		got := e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "1.47", patchOp1("replace", "/automated_clean", v)).JSON(t)
		want := v
		if v == "true" {
			want = true
		}
		if got["automated_clean"] != want {
			t.Errorf("automated_clean set to %v reads %v", v, got["automated_clean"])
		}
	}
}

func TestV1_48Protected(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := activeNode(t, e, nil)
	if got := fieldGate(t, e, id, "protected", "1.48"); got != false {
		t.Errorf("protected = %v", got)
	}
	fieldGate(t, e, id, "protected_reason", "1.48")
	e.must(http.StatusNotAcceptable, "PATCH", "/v1/nodes/"+id, "1.47", patchOp1("replace", "/protected", true))
	got := e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "1.48", []map[string]any{
		{"op": "replace", "path": "/protected", "value": true}, {"op": "replace", "path": "/protected_reason", "value": "prod"}}).JSON(t)
	if got["protected"] != true || got["protected_reason"] != "prod" {
		t.Errorf("after PATCH: %v, %v", got["protected"], got["protected_reason"])
	}
	// POST never takes protected: Ironic's node schema lacks it.
	if r := e.must(http.StatusBadRequest, "POST", "/v1/nodes", "1.48", map[string]any{"driver": "fake-hardware", "protected": true}); !strings.Contains(r.Fault(t), "protected") {
		t.Errorf("POST protected: %q", r.Fault(t))
	}
}

func TestV1_49Conductor(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := e.node(nil)
	host, ok := fieldGate(t, e, id, "conductor", "1.49").(string)
	if !ok || (host != "cond-a" && host != "cond-b") {
		t.Fatalf("conductor = %v, want one of the hash ring's hosts", host)
	}
	if got := filterGate(t, e, "conductor="+host, "1.49"); !slices.Equal(got, []string{id}) {
		t.Errorf("?conductor=%s listed %v", host, got)
	}
	if got := listUUIDs(t, e, "/v1/nodes?conductor=nowhere", "1.49"); len(got) != 0 {
		t.Errorf("?conductor=nowhere listed %v", got)
	}
	e.must(http.StatusBadRequest, "PATCH", "/v1/nodes/"+id, "1.49", patchOp1("replace", "/conductor", "x"))
}

func TestV1_51Description(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	body := map[string]any{"driver": "fake-hardware", "description": "rack 4 slot 2"}
	e.must(http.StatusNotAcceptable, "POST", "/v1/nodes", "1.50", body)
	id := e.must(http.StatusCreated, "POST", "/v1/nodes", "1.51", body).JSON(t)["uuid"].(string)
	e.node(nil)
	if got := fieldGate(t, e, id, "description", "1.51"); got != "rack 4"+" slot 2" {
		t.Errorf("description = %v", got)
	}
	if got := listUUIDs(t, e, "/v1/nodes?description_contains=slot", "1.51"); !slices.Equal(got, []string{id}) {
		t.Errorf("?description_contains=slot listed %v", got)
	}
	r := e.must(http.StatusBadRequest, "PATCH", "/v1/nodes/"+id, "1.51", patchOp1("replace", "/description", strings.Repeat("x", 4097)))
	if r.Fault(t) != "Cannot update node with description exceeding 4096 characters" {
		t.Errorf("long description: %q", r.Fault(t))
	}
}

func TestV1_61Retired(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id, other := e.node(nil), e.node(nil)
	if got := fieldGate(t, e, id, "retired", "1.61"); got != false {
		t.Errorf("retired = %v", got)
	}
	fieldGate(t, e, id, "retired_reason", "1.61")
	e.must(http.StatusNotAcceptable, "PATCH", "/v1/nodes/"+id, "1.60", patchOp1("replace", "/retired", true))
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, "1.61", []map[string]any{
		{"op": "replace", "path": "/retired", "value": true}, {"op": "replace", "path": "/retired_reason", "value": "eol"}})
	if got := listUUIDs(t, e, "/v1/nodes?retired=true", "1.61"); !slices.Equal(got, []string{id}) {
		t.Errorf("?retired=true listed %v", got)
	}
	if got := listUUIDs(t, e, "/v1/nodes?retired=false", "1.61"); !slices.Equal(got, []string{other}) {
		t.Errorf("?retired=false listed %v", got)
	}
}

func TestV1_73DeployUndeploy(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := e.node(nil)
	prov := "/v1/nodes/" + id + "/states/provision"
	for _, verb := range []string{"manage", "provide"} {
		e.must(http.StatusAccepted, "PUT", prov, maxAPI03, map[string]any{"target": verb})
	}
	e.must(http.StatusNotAcceptable, "PUT", prov, "1.72", map[string]any{"target": "deploy"})
	e.must(http.StatusAccepted, "PUT", prov, "1.73", map[string]any{"target": "deploy"})
	if st := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.73", nil).JSON(t)["provision_state"]; st != "active" {
		t.Fatalf("after deploy: %v", st)
	}
	e.must(http.StatusNotAcceptable, "PUT", prov, "1.72", map[string]any{"target": "undeploy"})
	e.must(http.StatusAccepted, "PUT", prov, "1.73", map[string]any{"target": "undeploy"})
	if st := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.73", nil).JSON(t)["provision_state"]; st != "available" {
		t.Fatalf("after undeploy: %v", st)
	}
}

func TestV1_75BootMode(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := e.node(nil)
	if got := fieldGate(t, e, id, "boot_mode", "1.75"); got != nil {
		t.Errorf("boot_mode = %v before any read", got)
	}
	setNode(t, e, id, func(n *objects.Node) {
		n.DriverInternalInfo = map[string]any{"boot_mode": "uefi", "secure_boot": true}
	})
	got := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.75", nil).JSON(t)
	if got["boot_mode"] != "uefi" || got["secure_boot"] != true {
		t.Errorf("boot_mode %v, secure_boot %v", got["boot_mode"], got["secure_boot"])
	}
	e.must(http.StatusBadRequest, "PATCH", "/v1/nodes/"+id, "1.75", patchOp1("replace", "/boot_mode", "bios"))
}

func TestV1_82Shards(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	body := map[string]any{"driver": "fake-hardware", "shard": "s1"}
	e.must(http.StatusNotAcceptable, "POST", "/v1/nodes", "1.81", body)
	a := e.must(http.StatusCreated, "POST", "/v1/nodes", "1.82", body).JSON(t)["uuid"].(string)
	b := e.must(http.StatusCreated, "POST", "/v1/nodes", "1.82", body).JSON(t)["uuid"].(string)
	c := e.node(nil)
	if got := fieldGate(t, e, a, "shard", "1.82"); got != "s1" {
		t.Errorf("shard = %v", got)
	}
	want := []string{a, b}
	slices.Sort(want)
	if got := filterGate(t, e, "shard=s1,s9", "1.82"); !slices.Equal(got, want) {
		t.Errorf("?shard=s1,s9 listed %v", got)
	}
	if got := filterGate(t, e, "sharded=false", "1.82"); !slices.Equal(got, []string{c}) {
		t.Errorf("?sharded=false listed %v", got)
	}
	r := e.must(http.StatusNotFound, "GET", "/v1/shards", "1.81", nil)
	if r.Fault(t) != "The API version does not allow shards" {
		t.Errorf("shards at 1.81: %q", r.Fault(t))
	}
	shards := e.must(http.StatusOK, "GET", "/v1/shards", "1.82", nil).JSON(t)["shards"].([]any)
	if len(shards) != 2 || shards[0].(map[string]any)["name"] != "s1" || shards[0].(map[string]any)["count"] != float64(2) ||
		shards[1].(map[string]any)["name"] != "None" {
		t.Errorf("shards = %v", shards)
	}
	t.Run("ports", testV1_82PortShards)
}

func TestV1_83ChildNodes(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	parent := e.node(map[string]any{"name": "parent"})
	body := map[string]any{"driver": "fake-hardware", "parent_node": "parent"}
	e.must(http.StatusNotAcceptable, "POST", "/v1/nodes", "1.82", body)
	child := e.must(http.StatusCreated, "POST", "/v1/nodes", "1.83", body).JSON(t)["uuid"].(string)
	if got := fieldGate(t, e, child, "parent_node", "1.83"); got != parent {
		t.Errorf("parent_node = %v, want the parent's UUID %s", got, parent)
	}
	r := e.must(http.StatusBadRequest, "POST", "/v1/nodes", "1.83", map[string]any{"driver": "fake-hardware", "parent_node": "nope"})
	if r.Fault(t) != "Unable to apply the requested parent_node 'nope'. Requested value was invalid." {
		t.Errorf("unknown parent: %q", r.Fault(t))
	}
	// Children stay out of lists (at every version) unless asked for.
	for _, ver := range []string{"1.31", "1.83"} {
		if got := listUUIDs(t, e, "/v1/nodes", ver); !slices.Equal(got, []string{parent}) {
			t.Errorf("list at %s = %v, want only the parent", ver, got)
		}
	}
	both := []string{parent, child}
	slices.Sort(both)
	if got := filterGate(t, e, "include_children=true", "1.83"); !slices.Equal(got, both) {
		t.Errorf("?include_children=true listed %v", got)
	}
	if got := filterGate(t, e, "parent_node="+parent, "1.83"); !slices.Equal(got, []string{child}) {
		t.Errorf("?parent_node listed %v", got)
	}
	e.must(http.StatusNotFound, "GET", "/v1/nodes/"+parent+"/children", "1.82", nil)
	got := e.must(http.StatusOK, "GET", "/v1/nodes/parent/children", "1.83", nil).JSON(t)
	if kids := got["children"].([]any); len(kids) != 1 || kids[0] != child {
		t.Errorf("children = %v", got)
	}
	e.must(http.StatusOK, "PATCH", "/v1/nodes/"+child, "1.83", patchOp1("remove", "/parent_node", nil))
	if got := listUUIDs(t, e, "/v1/nodes", "1.83"); !slices.Equal(got, both) {
		t.Errorf("after removing parent_node: %v", got)
	}
}

func TestV1_85Unhold(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := e.node(nil)
	// From a state without a hold, unhold is refused as Ironic refuses it:
	// 400, at any version (Ironic checks the state before the version).
	// From service hold: TestServiceHoldThroughRealConductor.
	want := `The requested action "unhold" can not be performed on node "` + id + `" while it is in state "enroll".`
	for _, ver := range []string{"1.84", "1.85"} {
		if got := e.must(http.StatusBadRequest, "PUT", "/v1/nodes/"+id+"/states/provision", ver, map[string]any{"target": "unhold"}).Fault(t); got != want {
			t.Errorf("unhold at %s: %q", ver, got)
		}
	}
}

func TestV1_86FirmwareInterface(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := e.node(nil)
	if got := fieldGate(t, e, id, "firmware_interface", "1.86"); got != "no-firmware" {
		t.Errorf("firmware_interface = %v, want no-firmware", got)
	}
	for ver, want := range map[string]bool{"1.85": false, "1.86": true} {
		d := e.must(http.StatusOK, "GET", "/v1/drivers/fake-hardware", ver, nil).JSON(t)
		if _, ok := d["enabled_firmware_interfaces"]; ok != want {
			t.Errorf("driver at %s: enabled_firmware_interfaces shown %v", ver, ok)
		}
	}
}

func TestV1_91JSONSuffix(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := e.node(map[string]any{"name": "n1"})
	if got := e.must(http.StatusOK, "GET", "/v1/nodes/n1.json", "1.90", nil).JSON(t)["uuid"]; got != id {
		t.Errorf("n1.json at 1.90 = %v, want node n1", got)
	}
	e.must(http.StatusNotFound, "GET", "/v1/nodes/n1.json", "1.91", nil)
	named := e.node(map[string]any{"name": "n2.json"})
	if got := e.must(http.StatusOK, "GET", "/v1/nodes/n2.json", "1.91", nil).JSON(t)["uuid"]; got != named {
		t.Errorf("n2.json at 1.91 = %v", got)
	}
}

func TestV1_95DisablePowerOff(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	body := map[string]any{"driver": "fake-hardware", "disable_power_off": true}
	e.must(http.StatusNotAcceptable, "POST", "/v1/nodes", "1.94", body)
	id := e.must(http.StatusCreated, "POST", "/v1/nodes", "1.95", body).JSON(t)["uuid"].(string)
	if got := fieldGate(t, e, id, "disable_power_off", "1.95"); got != true {
		t.Errorf("disable_power_off = %v", got)
	}
	for _, target := range []string{"power off", "soft power off"} {
		r := e.must(http.StatusConflict, "PUT", "/v1/nodes/"+id+"/states/power", "1.95", map[string]any{"target": target})
		if r.Fault(t) != "Failed to set node power state to "+target+"." {
			t.Errorf("%s: %q", target, r.Fault(t))
		}
	}
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id+"/states/power", "1.95", map[string]any{"target": "rebooting"})
}

func TestV1_98PatchEscapes(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := e.node(nil)
	// RFC 6901 escapes name keys with "/" and "~"; Rivet always decoded
	// them, and at the root Ironic's older check refused the same paths
	// as its newer one, so the version changes nothing observable here.
	for _, ver := range []string{"1.97", "1.98"} {
		got := e.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, ver, patchOp1("add", "/extra/a~1b~0c", ver)).JSON(t)
		if got["extra"].(map[string]any)["a/b~c"] != ver {
			t.Errorf("at %s extra = %v", ver, got["extra"])
		}
	}
}

func TestV1_104InstanceName(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	body := map[string]any{"driver": "fake-hardware", "instance_name": "web-1"}
	e.must(http.StatusNotAcceptable, "POST", "/v1/nodes", "1.103", body)
	id := e.must(http.StatusCreated, "POST", "/v1/nodes", "1.104", body).JSON(t)["uuid"].(string)
	e.node(nil)
	if got := fieldGate(t, e, id, "instance_name", "1.104"); got != "web-1" {
		t.Errorf("instance_name = %v", got)
	}
	if got := filterGate(t, e, "instance_name=web-1", "1.104"); !slices.Equal(got, []string{id}) {
		t.Errorf("?instance_name listed %v", got)
	}
	e.must(http.StatusBadRequest, "PATCH", "/v1/nodes/"+id, "1.104", patchOp1("replace", "/instance_name", ""))
}

func TestV1_107RequestID(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	// oslo's request_id middleware sends both headers at every version;
	// 1.107 documents the X- one.
	for _, ver := range []string{"1.106", "1.107"} {
		r := e.must(http.StatusOK, "GET", "/v1/nodes", ver, nil)
		x, plain := r.Header.Get("X-OpenStack-Request-Id"), r.Header.Get("OpenStack-Request-Id")
		if !strings.HasPrefix(x, "req-") || x != plain {
			t.Errorf("at %s: X-OpenStack-Request-Id %q, OpenStack-Request-Id %q", ver, x, plain)
		}
	}
}

func TestV1_109Health(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := e.node(nil)
	if got := fieldGate(t, e, id, "health", "1.109"); got != nil {
		t.Errorf("health = %v, want null (nothing reads it from the BMC yet)", got)
	}
	e.must(http.StatusBadRequest, "PATCH", "/v1/nodes/"+id, "1.109", patchOp1("replace", "/health", "OK"))
}

// TestNodeFields03Pinned: pinned to 0.2 the API serves up to 1.31, so
// every version of these tests is 406, and Node 1.2's fields are neither
// shown nor written.
func TestNodeFields03Pinned(t *testing.T) {
	tb := release.Default()
	pin, err := tb.ParsePin("0.2")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvPinned(t, release.NewPinner(tb, pin), withMaxAPI(maxAPI03))
	for _, ver := range []string{"1.32", "1.33", "1.46", "1.109"} {
		e.must(http.StatusNotAcceptable, "GET", "/v1/nodes", ver, nil)
	}
	id := e.node(nil)
	got := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "latest", nil).JSON(t)
	for _, f := range []string{"storage_interface", "rescue_interface", "conductor_group", "protected", "description"} {
		if _, ok := got[f]; ok {
			t.Errorf("pinned: %s shown", f)
		}
	}
	var ver string
	if err := e.store.DB().Bun().NewSelect().Table("nodes").Column("version").Where("uuid = ?", id).Scan(context.Background(), &ver); err != nil {
		t.Fatal(err)
	}
	var storage *string
	if err := e.store.DB().Bun().NewSelect().Table("nodes").Column("storage_interface").Where("uuid = ?", id).Scan(context.Background(), &storage); err != nil {
		t.Fatal(err)
	}
	if ver != "1.1" || storage != nil {
		t.Errorf("pinned create wrote Node %s with storage_interface %v; want 1.1 without it", ver, storage)
	}
}
