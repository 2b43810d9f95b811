package api

import (
	"net/http"
	"testing"

	"github.com/rivetmetal/rivet/core/release"
)

// serviceBody is a service request with one step of the fake driver's.
func serviceBody(extra map[string]any) map[string]any {
	b := map[string]any{"target": "service", "service_steps": []any{
		map[string]any{"interface": "raid", "step": "delete_configuration", "args": map[string]any{}}}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// TestV1_87Service: the service verb and the node's service_step arrive
// with 1.87. Below it an active node's service is 406; from a state the
// verb does not leave it is 400 at every version (Ironic checks the state
// first); the steps are required, checked and handed to the conductor.
func TestV1_87Service(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := activeNode(t, e, nil)
	if got := fieldGate(t, e, id, "service_step", "1.87"); got == nil || len(got.(map[string]any)) != 0 {
		t.Errorf("service_step = %v, want {}", got)
	}
	prov := "/v1/nodes/" + id + "/states/provision"
	e.must(http.StatusNotAcceptable, "PUT", prov, "1.86", serviceBody(nil))
	e.must(http.StatusAccepted, "PUT", prov, "1.87", serviceBody(nil))
	e.cond.mu.Lock()
	steps := e.cond.service.steps
	e.cond.mu.Unlock()
	if len(steps) != 1 || steps[0]["step"] != "delete_configuration" || steps[0]["interface"] != "raid" {
		t.Errorf("conductor got steps %v", steps)
	}
	if got := e.must(http.StatusOK, "GET", "/v1/nodes/"+id, "1.87", nil).JSON(t)["provision_state"]; got != "active" {
		t.Errorf("after service: %v, want active", got)
	}
	faults := map[string]struct {
		body map[string]any
		want string
	}{
		"no steps":    {map[string]any{"target": "service"}, `"service_steps" is required when setting target provision state to service`},
		"empty steps": {map[string]any{"target": "service", "service_steps": []any{}}, `"service_steps" is required when setting target provision state to service`},
		"bad interface": {map[string]any{"target": "service", "service_steps": []any{map[string]any{"interface": "boot", "step": "x"}}},
			`Invalid service_steps: step 0 needs "interface", one of vendor, power, management, firmware, deploy, bios, raid`},
		"no step name": {map[string]any{"target": "service", "service_steps": []any{map[string]any{"interface": "raid"}}},
			`Invalid service_steps: step 0 needs "step", a non-empty string`},
		"extra key": {map[string]any{"target": "service", "service_steps": []any{map[string]any{"interface": "raid", "step": "x", "priority": 1}}},
			`Invalid service_steps: Additional properties are not allowed ('priority' was unexpected)`},
		"steps elsewhere": {map[string]any{"target": "rebuild", "service_steps": []any{map[string]any{"interface": "raid", "step": "x"}}},
			`"service_steps" is only valid when setting target provision state to service`},
		"not a list": {map[string]any{"target": "service", "service_steps": "raid.x"},
			`Invalid input for field/attribute service_steps. Value: '"raid.x"'. Wrong type. Expected 'list'.`},
	}
	for name, tc := range faults {
		t.Run(name, func(t *testing.T) {
			if got := e.must(http.StatusBadRequest, "PUT", prov, "1.87", tc.body).Fault(t); got != tc.want {
				t.Errorf("fault %q\nwant  %q", got, tc.want)
			}
		})
	}
	other := e.node(nil)
	want := `The requested action "service" can not be performed on node "` + other + `" while it is in state "enroll".`
	for _, ver := range []string{"1.86", "1.87"} {
		if got := e.must(http.StatusBadRequest, "PUT", "/v1/nodes/"+other+"/states/provision", ver, serviceBody(nil)).Fault(t); got != want {
			t.Errorf("service from enroll at %s: %q", ver, got)
		}
	}
	// The service states are states the API knows.
	e.must(http.StatusOK, "GET", "/v1/nodes?provision_state=service%20failed", "1.87", nil)
}

// TestV1_108ServiceDisableRamdisk: disable_ramdisk goes with service from
// 1.108 (406 below); with another verb than clean or service it is 400.
func TestV1_108ServiceDisableRamdisk(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := activeNode(t, e, nil)
	prov := "/v1/nodes/" + id + "/states/provision"
	body := serviceBody(map[string]any{"disable_ramdisk": true})
	if got := e.must(http.StatusNotAcceptable, "PUT", prov, "1.107", body).Fault(t); got != "disable_ramdisk is not acceptable in this API version" {
		t.Errorf("1.107: %q", got)
	}
	e.must(http.StatusAccepted, "PUT", prov, "1.108", body)
	e.cond.mu.Lock()
	disabled := e.cond.service.disableRamdisk
	e.cond.mu.Unlock()
	if !disabled {
		t.Error("disable_ramdisk not passed to the conductor")
	}
	if got := e.must(http.StatusBadRequest, "PUT", prov, "1.108", map[string]any{"target": "rebuild", "disable_ramdisk": true}).Fault(t); got != "disable_ramdisk is supported only with manual cleaning or servicing" {
		t.Errorf("with rebuild: %q", got)
	}
	// A string oslo reads as a boolean ("yes") is taken, as by Ironic; others are 400.
	e.must(http.StatusBadRequest, "PUT", prov, "1.108", serviceBody(map[string]any{"disable_ramdisk": "maybe"}))
}

// TestRunbookForService: a runbook (1.92) named in a service request
// (Ironic's _handle_runbook before 1.112) gives the service steps, in
// their order, when the node has its name among its traits; with
// service_steps too it is 400; its disable_ramdisk (a boolean, never
// absent) makes it 406 below 1.108, as in Ironic; unknown, 404.
func TestRunbookForService(t *testing.T) {
	e := newEnv(t, withMaxAPI(maxAPI03))
	id := activeNode(t, e, nil)
	prov := "/v1/nodes/" + id + "/states/provision"
	e.must(http.StatusCreated, "POST", "/v1/runbooks", "1.92", map[string]any{"name": "CUSTOM_RAID", "steps": []any{
		map[string]any{"interface": "raid", "step": "apply_configuration", "order": 2,
			"args": map[string]any{"raid_config": map[string]any{"logical_disks": []any{}}}},
		map[string]any{"interface": "raid", "step": "delete_configuration", "order": "1", "args": map[string]any{}},
	}})
	use := map[string]any{"target": "service", "runbook": "CUSTOM_RAID"}
	want := "This runbook has not been approved for use on this node " + id + ". Please ask an administrator to add it to your node traits."
	if got := e.must(http.StatusBadRequest, "PUT", prov, "1.108", use).Fault(t); got != want {
		t.Errorf("without the trait: %q", got)
	}
	e.must(http.StatusNoContent, "PUT", "/v1/nodes/"+id+"/traits", "1.37", map[string]any{"traits": []string{"CUSTOM_RAID"}})
	e.must(http.StatusNotAcceptable, "PUT", prov, "1.91", use)
	e.must(http.StatusNotAcceptable, "PUT", prov, "1.107", use)
	e.must(http.StatusNotFound, "PUT", prov, "1.108", map[string]any{"target": "service", "runbook": "CUSTOM_NONE"})
	both := serviceBody(map[string]any{"runbook": "CUSTOM_RAID"})
	if got := e.must(http.StatusBadRequest, "PUT", prov, "1.108", both).Fault(t); got != `Please provide either "service_steps" or a runbook, but not both.` {
		t.Errorf("both: %q", got)
	}
	e.must(http.StatusAccepted, "PUT", prov, "1.108", use)
	e.cond.mu.Lock()
	steps, disabled := e.cond.service.steps, e.cond.service.disableRamdisk
	e.cond.mu.Unlock()
	if len(steps) != 2 || steps[0]["step"] != "delete_configuration" || steps[1]["step"] != "apply_configuration" || disabled {
		t.Errorf("conductor got %v (disable_ramdisk %v), want the runbook's steps by order", steps, disabled)
	}
	if got := e.must(http.StatusBadRequest, "PUT", prov, "1.108", map[string]any{"target": "rebuild", "runbook": "CUSTOM_RAID"}).Fault(t); got != "disable_ramdisk is supported only with manual cleaning or servicing" {
		t.Errorf("runbook with rebuild: %q", got)
	}
	// Manual cleaning takes a runbook the same way.
	other := e.node(nil)
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/"+other+"/states/provision", "1.108", map[string]any{"target": "manage"})
	e.must(http.StatusNoContent, "PUT", "/v1/nodes/"+other+"/traits", "1.37", map[string]any{"traits": []string{"CUSTOM_RAID"}})
	e.must(http.StatusAccepted, "PUT", "/v1/nodes/"+other+"/states/provision", "1.108", map[string]any{"target": "clean", "runbook": "CUSTOM_RAID"})
	e.cond.mu.Lock()
	clean := e.cond.cleanSteps
	e.cond.mu.Unlock()
	if len(clean) != 2 || clean[0]["step"] != "delete_configuration" {
		t.Errorf("clean with a runbook: conductor got %v", clean)
	}
}

// TestServicePinned: pinned to release 0.2 (API 1.31, conductor RPC 1.4)
// the service verb is 406 whatever the test cap: nothing reaches the
// conductor.
func TestServicePinned(t *testing.T) {
	old, ok := release.Default().Lookup("0.2")
	if !ok {
		t.Fatal("no release 0.2")
	}
	e := newEnvPinned(t, release.NewPinner(release.Default(), release.Pin{Mode: release.PinRelease, Release: old}), withMaxAPI(maxAPI03))
	id := e.node(nil)
	e.must(http.StatusNotAcceptable, "PUT", "/v1/nodes/"+id+"/states/provision", "1.87", serviceBody(nil))
	for _, c := range e.cond.calls {
		if c == "do_node_service" {
			t.Fatal("a pinned API called do_node_service")
		}
	}
}
