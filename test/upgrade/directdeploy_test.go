package upgrade

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/conductor/agentclient/agenttest"
)

// The direct deploy through a fake ironic-python-agent (agenttest: the
// agent's command API; the lookup and heartbeats go through the load's
// client, so they count in the tables): the conductor waits in "wait
// call-back", the agent looks its node up by MAC (and gets its token),
// heartbeats, runs the write_image deploy step the conductor sends it,
// and the node goes active. Undeploying skips cleaning (automated_clean
// false: cleaning would boot the agent again).

// directImage is the whole-disk image of the direct deploys (the fake
// agent writes nothing; the conductor only validates the URL and sha256).
var directImage = map[string]any{
	"image_source":   "http://images.rivet.test/disk.raw",
	"image_checksum": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
}

// setupDirect switches node to the direct deploy, without cleaning; c must
// speak 1.47 or later (automated_clean).
func setupDirect(ctx context.Context, c *client, node string) error {
	var drv struct {
		Deploy []string `json:"enabled_deploy_interfaces"`
	}
	if _, err := c.call(ctx, http.MethodGet, "/v1/drivers/fake-hardware", nil, &drv, http.StatusOK); err != nil {
		return err
	}
	if !slices.Contains(drv.Deploy, "direct") {
		return c.failed(fmt.Sprintf("fake-hardware does not enable the direct deploy (enabled: %v)", drv.Deploy))
	}
	patch := []map[string]any{
		{"op": "replace", "path": "/deploy_interface", "value": "direct"},
		{"op": "replace", "path": "/automated_clean", "value": false},
	}
	_, err := c.call(ctx, http.MethodPatch, "/v1/nodes/"+node, patch, nil, http.StatusOK)
	return err
}

// setImage puts the image in node's instance_info (an undeploy clears it).
func setImage(ctx context.Context, c *client, node string) error {
	patch := []map[string]any{
		{"op": "add", "path": "/instance_info/image_source", "value": directImage["image_source"]},
		{"op": "add", "path": "/instance_info/image_checksum", "value": directImage["image_checksum"]},
	}
	_, err := c.call(ctx, http.MethodPatch, "/v1/nodes/"+node, patch, nil, http.StatusOK)
	return err
}

// directDeployCycle deploys node (set up by setupDirect, available, with a
// port of address mac) through a fake agent and undeploys it (which
// clears instance_info: each deploy sets the image again).
func directDeployCycle(ctx context.Context, c *client, node, mac string) error {
	a := agenttest.New()
	a.Handle("deploy.execute_deploy_step", func(_ context.Context, p map[string]any) (map[string]any, error) {
		return map[string]any{"deploy_result": nil, "deploy_step": p["step"]}, nil
	})
	agentURL := a.Start()
	defer a.Close()
	if err := setImage(ctx, c, node); err != nil {
		return err
	}
	if _, err := c.call(ctx, http.MethodPut, "/v1/nodes/"+node+"/states/provision", map[string]any{"target": "active"}, nil, http.StatusAccepted); err != nil {
		return err
	}
	if err := waitNode(ctx, c, node, "wait call-back", func(n apiNode) (bool, error) {
		return n.ProvisionState == "wait call-back", failedState(n, "deploy")
	}); err != nil {
		return err
	}
	var lk struct {
		Node struct {
			UUID string `json:"uuid"`
		} `json:"node"`
		Config struct {
			AgentToken *string `json:"agent_token"`
		} `json:"config"`
	}
	if _, err := c.call(ctx, http.MethodGet, "/v1/lookup?addresses="+url.QueryEscape(mac), nil, &lk, http.StatusOK); err != nil {
		return err
	}
	if lk.Node.UUID != node || lk.Config.AgentToken == nil || *lk.Config.AgentToken == "" || *lk.Config.AgentToken == "******" {
		return c.failed(fmt.Sprintf("lookup of %s: node %q, agent token %v; want node %s and its new token", mac, lk.Node.UUID, lk.Config.AgentToken, node))
	}
	a.Token = *lk.Config.AgentToken
	beat := map[string]any{"callback_url": agentURL, "agent_token": a.Token, "agent_version": "9.14.1"}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		// The deploy ends on a heartbeat: the token is wiped then, and a
		// heartbeat racing the end is refused (400), as IPA's would be.
		status, err := c.call(ctx, http.MethodPost, "/v1/heartbeat/"+node, beat, nil, http.StatusAccepted, http.StatusBadRequest)
		if err != nil {
			return err
		}
		var n apiNode
		if _, err := c.call(ctx, http.MethodGet, "/v1/nodes/"+node, nil, &n, http.StatusOK); err != nil {
			return err
		}
		if n.ProvisionState == "active" && n.TargetProvisionState == nil {
			break
		}
		if status == http.StatusBadRequest {
			return c.failed(fmt.Sprintf("node %s in %q refused its agent's heartbeat with the token of its lookup", node, n.ProvisionState))
		}
		if err := failedState(n, "deploy"); err != nil {
			return c.failed(err.Error())
		}
		if time.Now().After(deadline) {
			return c.failed(fmt.Sprintf("node %s: direct deploy still %q after two minutes of heartbeats (agent received %v)", node, n.ProvisionState, a.Received()))
		}
		pace(ctx, 300*time.Millisecond)
	}
	if rec := a.Received(); !slices.Contains(rec, "deploy.execute_deploy_step") {
		return c.failed(fmt.Sprintf("node %s went active but the agent received %v, no deploy step", node, rec))
	}
	return provision(ctx, c, node, "deleted", "available")
}

// failedState is an error when n is in a failed state.
func failedState(n apiNode, what string) error {
	if strings.HasSuffix(n.ProvisionState, "failed") || n.ProvisionState == "error" {
		return fmt.Errorf("node %s: %s went to %q: %s", n.UUID, what, n.ProvisionState, deref(n.LastError))
	}
	return nil
}

// directCycle is the load's direct deploy worker: it sets its node up
// once, then deploys and undeploys it.
func (l *load) directCycle(ctx context.Context, nk *newKinds) {
	if !nk.directReady {
		if setupDirect(ctx, l.c, l.f.direct) != nil {
			pace(ctx, time.Second)
			return
		}
		nk.directReady = true
	}
	var n apiNode
	if _, err := l.c.call(ctx, http.MethodGet, "/v1/nodes/"+l.f.direct, nil, &n, http.StatusOK); err != nil {
		pace(ctx, time.Second)
		return
	}
	if n.ProvisionState != "available" {
		// An earlier cycle failed midway (counted then): undeploy, as an
		// operator would, then go on.
		if provision(ctx, l.c, l.f.direct, "deleted", "available") != nil {
			pace(ctx, time.Second)
			return
		}
	}
	if directDeployCycle(ctx, l.c, l.f.direct, l.f.directMAC) == nil {
		nk.directCycles.Add(1)
	} else {
		pace(ctx, time.Second)
	}
}

// TestDirectDeployMini runs the direct deploy helper on one node of the
// working tree's release (an API and a conductor, no load): what the
// load's direct deploy worker does after the unpin, checked cheaply.
func TestDirectDeployMini(t *testing.T) {
	requireUpgrade(t)
	_, cur := builds(t)
	d := newMini(t, cur, cur)
	d.add("conductor", cur, "")
	api := d.add("api", cur, "")
	ctx := context.Background()
	c := newClient(api.url(), cur.info.APIMax, &recorder{})
	node := createNode(t, c, "direct-0")
	mac := mac(0xfc, 1)
	if _, err := c.call(ctx, http.MethodPost, "/v1/ports", map[string]any{"node_uuid": node, "address": mac}, nil, http.StatusCreated); err != nil {
		t.Fatal(err)
	}
	for _, st := range []struct{ verb, state string }{{"manage", "manageable"}, {"provide", "available"}} {
		if err := provision(ctx, c, node, st.verb, st.state); err != nil {
			t.Fatal(err)
		}
	}
	if err := setupDirect(ctx, c, node); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := directDeployCycle(ctx, c, node, mac); err != nil {
			t.Fatalf("direct deploy %d: %v", i, err)
		}
	}
	d.stopAllMini()
}
