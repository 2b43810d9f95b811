package conductor

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/conductor/agentclient/agenttest"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
)

const testSHA256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// directNode is an available fake-hardware node with the direct deploy
// and a whole-disk image in instance_info.
func (h *harness) directNode(name string, ii map[string]any) *objects.Node {
	h.t.Helper()
	n := h.available(name)
	n.DeployInterface = ptr("direct")
	if ii == nil {
		ii = map[string]any{"image_source": "http://images.test/disk.raw", "image_checksum": testSHA256}
	}
	n.InstanceInfo = ii
	if _, err := h.api.UpdateNode(context.Background(), n); err != nil {
		h.t.Fatal(err)
	}
	return h.node(n.UUID)
}

// agentFor starts a fake agent for n, has the conductor issue n's token
// and returns a heartbeat function (as the REST API passes it on).
func (h *harness) agentFor(n *objects.Node, a *agenttest.Agent) func() error {
	h.t.Helper()
	url := a.Start()
	h.t.Cleanup(a.Close)
	a.Token = h.lookupToken(n)
	return func() error {
		return h.api.Heartbeat(context.Background(), n, url, "9.14.1", agenttoken.Digest(a.Token))
	}
}

// heartbeatUntil heartbeats every 20 ms until n reaches state (the agent
// heartbeats while it works; a heartbeat finding the node locked is
// refused, as the REST API answers the agent 409).
func (h *harness) heartbeatUntil(n *objects.Node, beat func() error, state string) *objects.Node {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		got := h.node(n.UUID)
		if got.ProvisionState == state {
			return got
		}
		if err := beat(); err != nil {
			var re *rpc.RemoteError
			if !errors.As(err, &re) || re.Class != "NodeLocked" {
				h.t.Logf("heartbeat: %v", err)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	got := h.node(n.UUID)
	h.t.Fatalf("node %s: %s (last_error %v), want %s", n.UUID, got.ProvisionState, deref(got.LastError), state)
	return nil
}

// The direct deploy: the conductor boots the agent and waits; on the
// agent's heartbeat it has the agent write the image (an asynchronous
// command polled on heartbeats), then boots from disk: active, powered on,
// booting from disk, with the deploy's bookkeeping gone.
func TestDirectDeployThroughAgent(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	n := h.directNode("node-1", nil)
	if err := h.api.DoNodeDeploy(context.Background(), n, false, "H4sIAAAAAAAAA+3BMQEAAADCoPVPbQwfoAAAAAAAAAAAAAAAAAAAAIC3AYbSVKsAKAAA"); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "wait call-back")
	a := agenttest.New()
	a.Delay = 100 * time.Millisecond
	var gotParams map[string]any
	a.Handle("deploy.execute_deploy_step", func(_ context.Context, p map[string]any) (map[string]any, error) {
		gotParams = p
		return map[string]any{"deploy_result": nil, "deploy_step": p["step"]}, nil
	})
	beat := h.agentFor(n, a)
	got := h.heartbeatUntil(n, beat, "active")
	if got.LastError != nil || deref(got.PowerState) != "power on" {
		t.Errorf("active node: power %v, last_error %v", deref(got.PowerState), deref(got.LastError))
	}
	for _, k := range []string{diiDeploySteps, diiDeployStepIndex, diiAgentCommand, agenttoken.Key} {
		if _, ok := got.DriverInternalInfo[k]; ok {
			t.Errorf("driver_internal_info keeps %s after the deploy", k)
		}
	}
	if rec := a.Received(); !slices.Equal(rec, []string{"deploy.execute_deploy_step"}) {
		t.Errorf("agent received %v", rec)
	}
	step := gotParams["step"].(map[string]any)
	args := step["args"].(map[string]any)
	img := args["image_info"].(map[string]any)
	if step["step"] != "write_image" || img["os_hash_algo"] != "sha256" || img["os_hash_value"] != testSHA256 ||
		img["disk_format"] != "raw" || img["image_type"] != "whole-disk" || args["configdrive"] == nil {
		t.Errorf("write_image params: %v", gotParams)
	}
	if _, ok := gotParams["node"].(map[string]any)["driver_info"]; ok {
		t.Error("the agent was sent driver_info")
	}
	if dev, err := h.hw.GetBootDevice(context.Background(), pluginNode(got)); err != nil || dev.Device != "disk" || !dev.Persistent {
		t.Errorf("boot device %+v %v, want disk, persistent", dev, err)
	}
}

// The agent's error fails the deploy with the step named and the agent's
// message; the node is left without a lease.
func TestDirectDeployAgentFailure(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	n := h.directNode("node-1", nil)
	if err := h.api.DoNodeDeploy(context.Background(), n, false, nil); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "wait call-back")
	a := agenttest.New()
	a.Handle("deploy.execute_deploy_step", func(context.Context, map[string]any) (map[string]any, error) {
		return nil, errors.New("Error verifying image checksum: Image failed to verify against checksum.")
	})
	got := h.heartbeatUntil(n, h.agentFor(n, a), "deploy failed")
	if msg := deref(got.LastError); !strings.Contains(msg, "deploy.write_image") || !strings.Contains(msg, "Image failed to verify against checksum") {
		t.Errorf("last_error %q", msg)
	}
	if got.Reservation != nil {
		t.Errorf("lease left: %v", *got.Reservation)
	}
}

// Validation: a direct deploy needs an http(s) image_source and a sha256
// or sha512 checksum; user deploy steps must be ones it can run.
func TestDirectDeployValidation(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	for name, tc := range map[string]struct {
		ii    map[string]any
		steps []map[string]any
		want  string
	}{
		"no image":     {map[string]any{"image_checksum": testSHA256}, nil, "image_source must be an http(s) URL"},
		"md5":          {map[string]any{"image_source": "http://i/d", "image_checksum": "d41d8cd98f00b204e9800998ecf8427e"}, nil, "MD5"},
		"no checksum":  {map[string]any{"image_source": "http://i/d"}, nil, "needs image_checksum"},
		"vhd":          {map[string]any{"image_source": "http://i/d", "image_checksum": testSHA256, "image_disk_format": "vhd"}, nil, "vhd"},
		"unknown step": {nil, []map[string]any{{"interface": "deploy", "step": "frobnicate", "priority": 50}}, "deploy.frobnicate is not supported"},
		"bad priority": {nil, []map[string]any{{"interface": "deploy", "step": "write_image", "priority": -1}}, "priority"},
	} {
		t.Run(name, func(t *testing.T) {
			n := h.directNode("n-"+strings.ReplaceAll(name, " ", "-"), tc.ii)
			err := h.api.DoNodeDeploy(context.Background(), n, false, nil, tc.steps)
			if class, code := classOf(err); code != 400 || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s %d: %v", class, code, err)
			}
			if got := h.node(n.UUID); got.ProvisionState != "available" {
				t.Errorf("state %s", got.ProvisionState)
			}
		})
	}
}

// User deploy steps (API 1.69) join the standard ones by priority; a
// standard step given priority 0 is skipped.
func TestPlanDeploy(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	n := h.directNode("node-1", nil)
	plan, err := h.svc.planDeploy(context.Background(), n, []DeployStep{
		{Interface: "deploy", Step: "erase_devices_metadata", Priority: 90},
		{Interface: "deploy", Step: "prepare_instance_boot", Priority: 0},
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range plan {
		names = append(names, st.Step)
	}
	if want := []string{"deploy", "erase_devices_metadata", "write_image", "tear_down_agent", "boot_instance"}; !slices.Equal(names, want) {
		t.Errorf("plan %v, want %v", names, want)
	}
}

// An agent that dies while it writes the image sends no more heartbeats:
// deploy_callback_timeout fails the deploy at the next check, with no
// lease left; a cleaning agent that dies fails cleaning the same way.
func TestDirectDeployAgentDiesMidDeploy(t *testing.T) {
	h := newHarness(t, nil, "cond-a", func(c *Config) {
		c.DeployCallbackTimeout = 300 * time.Millisecond
		c.EraseDevicesMetadataPriority = 99
	})
	ctx := context.Background()
	n := h.directNode("node-1", nil)
	if err := h.api.DoNodeDeploy(ctx, n, false, nil); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "wait call-back")
	a := agenttest.New()
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	a.Handle("deploy.execute_deploy_step", func(context.Context, map[string]any) (map[string]any, error) {
		<-block
		return nil, nil
	})
	beat := h.agentFor(n, a)
	h.waitFor(n.UUID, "write_image started", func(got *objects.Node) bool {
		if got.DriverInternalInfo[diiAgentCommand] != nil && got.ProvisionState == "wait call-back" && got.Reservation == nil {
			return true
		}
		_ = beat()
		return false
	})
	a.Close() // the agent is gone
	time.Sleep(400 * time.Millisecond)
	if got := h.svc.checkOrphans(ctx); got != 1 {
		t.Fatalf("checkOrphans recovered %d nodes, want 1", got)
	}
	got := h.waitState(n.UUID, "deploy failed")
	if !strings.Contains(deref(got.LastError), "Timeout reached while waiting for callback") || got.Reservation != nil {
		t.Fatalf("last_error %q, reservation %v", deref(got.LastError), got.Reservation)
	}

	// Cleaning: tear down with automated cleaning, no agent ever comes.
	h.svc.cfg.AutomatedClean = true
	if err := h.api.DoNodeTearDown(ctx, got); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "clean wait")
	time.Sleep(400 * time.Millisecond)
	if got := h.svc.checkOrphans(ctx); got != 1 {
		t.Fatalf("checkOrphans recovered %d cleaning nodes, want 1", got)
	}
	got = h.waitState(n.UUID, "clean failed")
	if !strings.Contains(deref(got.LastError), "Timeout reached while cleaning") || got.Reservation != nil {
		t.Fatalf("last_error %q, reservation %v", deref(got.LastError), got.Reservation)
	}
}

// A deploy template matching the instance's traits (API 1.55) adds its
// steps to the plan and can disable a standard one (priority 0); traits
// the node lacks refuse the deploy before it starts.
func TestPlanDeployWithTemplate(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.directNode("node-1", nil)
	if err := h.store.SetNodeTraits(ctx, n.ID, []string{"CUSTOM_WIPE"}); err != nil {
		t.Fatal(err)
	}
	obj, err := h.store.Registry().New("DeployTemplate")
	if err != nil {
		t.Fatal(err)
	}
	dt := obj.(*objects.DeployTemplate)
	dt.UUID, dt.Name = "bbb45f41-d4bc-4307-8d1d-32f95ce1e920", "CUSTOM_WIPE"
	dt.Steps = []map[string]any{
		{"interface": "deploy", "step": "erase_devices_metadata", "priority": json.Number("95"), "args": map[string]any{}},
		{"interface": "deploy", "step": "tear_down_agent", "priority": json.Number("0"), "args": map[string]any{}},
	}
	if err := h.store.Create(ctx, dt); err != nil {
		t.Fatal(err)
	}
	n.InstanceInfo["traits"] = []any{"CUSTOM_WIPE"}
	plan, err := h.svc.planDeploy(ctx, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range plan {
		names = append(names, st.Step)
	}
	if want := []string{"deploy", "erase_devices_metadata", "write_image", "prepare_instance_boot", "boot_instance"}; !slices.Equal(names, want) {
		t.Errorf("plan %v, want %v", names, want)
	}
	n.InstanceInfo["traits"] = []any{"CUSTOM_OTHER"}
	if _, err := h.svc.planDeploy(ctx, n, nil); err == nil {
		t.Error("a trait the node lacks was accepted")
	}
}
