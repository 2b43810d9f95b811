package api

import (
	"net/http"
	"slices"
	"testing"
)

// 1.110: abort of a node in "wait call-back" is 406 below (Ironic's
// allow_deploy_abort), passed to the conductor at and above; aborts from
// other wait states keep their own versions.
func TestV1_110DeployWaitAbort(t *testing.T) {
	e, id, _ := agentEnv(t, "wait call-back", withMaxAPI("1.110"))
	path := "/v1/nodes/" + id + "/states/provision"
	e.must(http.StatusNotAcceptable, "PUT", path, "1.109", map[string]any{"target": "abort"})
	if slices.Contains(e.cond.calls, "do_provisioning_action abort") {
		t.Fatal("1.109: the abort reached the conductor")
	}
	e.must(http.StatusAccepted, "PUT", path, "1.110", map[string]any{"target": "abort"})
	if !slices.Contains(e.cond.calls, "do_provisioning_action abort") {
		t.Errorf("1.110: conductor calls %v", e.cond.calls)
	}
	e2, id2, _ := agentEnv(t, "clean wait", withMaxAPI("1.110"))
	e2.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id2+"/states/provision", "1.13", map[string]any{"target": "abort"})
}

// 1.70: disable_ramdisk with manual cleaning. Below, 406 "disable_ramdisk
// is not acceptable in this API version"; with another verb 400 at every
// version; at 1.70 passed on to the conductor (false and null are not).
func TestV1_70CleanDisableRamdisk(t *testing.T) {
	e, id, _ := agentEnv(t, "manageable", withMaxAPI("1.70"))
	path := "/v1/nodes/" + id + "/states/provision"
	steps := []map[string]any{{"interface": "management", "step": "reset_bmc"}}
	body := map[string]any{"target": "clean", "clean_steps": steps, "disable_ramdisk": true}
	if got := e.must(http.StatusNotAcceptable, "PUT", path, "1.69", body).Fault(t); got != "disable_ramdisk is not acceptable in this API version" {
		t.Errorf("1.69: %q", got)
	}
	if got := e.must(http.StatusBadRequest, "PUT", path, "1.70", map[string]any{"target": "provide", "disable_ramdisk": true}).Fault(t); got != "disable_ramdisk is supported only with manual cleaning or servicing" {
		t.Errorf("provide: %q", got)
	}
	e.must(http.StatusBadRequest, "PUT", path, "1.70", map[string]any{"target": "clean", "clean_steps": steps, "disable_ramdisk": "maybe"})
	if slices.Contains(e.cond.calls, "do_node_clean") {
		t.Fatalf("refused requests reached the conductor: %v", e.cond.calls)
	}
	e.must(http.StatusAccepted, "PUT", path, "1.70", body)
	if !slices.Contains(e.cond.calls, "do_node_clean disable_ramdisk") {
		t.Errorf("1.70: conductor calls %v", e.cond.calls)
	}
	e.cond.calls = nil
	e.must(http.StatusAccepted, "PUT", path, "1.69", map[string]any{"target": "clean", "clean_steps": steps, "disable_ramdisk": nil})
	if !slices.Contains(e.cond.calls, "do_node_clean") || slices.Contains(e.cond.calls, "do_node_clean disable_ramdisk") {
		t.Errorf("null disable_ramdisk: conductor calls %v", e.cond.calls)
	}
}
