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
