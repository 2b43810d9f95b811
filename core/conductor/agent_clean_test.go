package conductor

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/conductor/agentclient/agenttest"
)

// ipaCleanSteps is get_clean_steps' answer of IPA's generic manager (the
// steps that matter here).
func ipaCleanSteps(context.Context, map[string]any) (map[string]any, error) {
	return map[string]any{
		"clean_steps": map[string]any{"GenericHardwareManager": []any{
			map[string]any{"step": "erase_devices", "priority": 10, "interface": "deploy", "abortable": true},
			map[string]any{"step": "erase_devices_metadata", "priority": 99, "interface": "deploy", "abortable": true},
			map[string]any{"step": "burnin_cpu", "priority": 0, "interface": "deploy"},
		}},
		"hardware_manager_version": map[string]any{"generic_hardware_manager": "1.2"},
	}, nil
}

// cleanAgent is a fake agent answering clean steps and recording the
// clean steps it ran; fail makes execute_clean_step fail.
func cleanAgent(fail error) (*agenttest.Agent, func() []string) {
	a := agenttest.New()
	var mu sync.Mutex
	var ran []string
	a.Handle(cmdGetCleanSteps, ipaCleanSteps)
	a.Handle(cmdExecuteClean, func(_ context.Context, p map[string]any) (map[string]any, error) {
		step, _ := p["step"].(map[string]any)
		mu.Lock()
		ran = append(ran, step["step"].(string))
		mu.Unlock()
		if fail != nil {
			return nil, fail
		}
		return map[string]any{"clean_result": nil, "clean_step": step}, nil
	})
	return a, func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(ran) }
}

// Undeploying a direct node with automated cleaning boots the agent, asks
// it for its clean steps and runs those enabled ([deploy] priorities:
// erase_devices_metadata only by default), then powers off: available.
func TestAgentAutomatedClean(t *testing.T) {
	h := newHarness(t, nil, "cond-a", func(c *Config) { c.EraseDevicesMetadataPriority = 99 })
	n := h.directNode("node-1", nil)
	h.svc.cfg.AutomatedClean = true
	if err := h.api.DoNodeDeploy(context.Background(), n, false, nil); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "wait call-back")
	h.heartbeatUntil(n, h.agentFor(n, agenttest.New()), "active")

	if err := h.api.DoNodeTearDown(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "clean wait")
	a, ran := cleanAgent(nil)
	got := h.heartbeatUntil(n, h.agentFor(n, a), "available")
	if !slices.Equal(ran(), []string{"erase_devices_metadata"}) {
		t.Errorf("clean steps run: %v", ran())
	}
	if len(got.CleanStep) != 0 || deref(got.PowerState) != "power off" || got.LastError != nil {
		t.Errorf("after cleaning: clean_step %v, power %v, last_error %v", got.CleanStep, deref(got.PowerState), deref(got.LastError))
	}
	if _, ok := got.DriverInternalInfo[agenttoken.Key]; ok {
		t.Error("the cleaning agent's token outlived cleaning")
	}
}

// A clean step the agent fails leaves the node in clean failed with the
// agent's error, without a lease.
func TestAgentCleanFailure(t *testing.T) {
	h := newHarness(t, nil, "cond-a", func(c *Config) { c.EraseDevicesMetadataPriority = 99; c.AutomatedClean = true })
	n := h.directNode("node-1", nil)
	if err := h.api.DoProvisioningAction(context.Background(), n, "manage"); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "manageable")
	if err := h.api.DoProvisioningAction(context.Background(), n, "provide"); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "clean wait")
	a, _ := cleanAgent(errors.New("Error erasing block device /dev/sda: wipefs failed"))
	got := h.heartbeatUntil(n, h.agentFor(n, a), "clean failed")
	if msg := deref(got.LastError); !strings.Contains(msg, "wipefs failed") || !strings.Contains(msg, "erase_devices_metadata") {
		t.Errorf("last_error %q", msg)
	}
	if got.Reservation != nil {
		t.Errorf("lease left: %v", *got.Reservation)
	}
}

// Manual cleaning runs the steps given on the agent and returns the node
// to manageable; a step the agent does not have fails it.
func TestAgentManualClean(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	n := h.directNode("node-1", nil)
	if err := h.api.DoProvisioningAction(context.Background(), n, "manage"); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "manageable")
	if err := h.api.DoNodeClean(context.Background(), n, []map[string]any{{"interface": "deploy", "step": "erase_devices"}}); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "clean wait")
	a, ran := cleanAgent(nil)
	h.heartbeatUntil(n, h.agentFor(n, a), "manageable")
	if !slices.Equal(ran(), []string{"erase_devices"}) {
		t.Errorf("clean steps run: %v", ran())
	}

	if err := h.api.DoNodeClean(context.Background(), n, []map[string]any{{"interface": "deploy", "step": "frobnicate"}}); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "clean wait")
	a2, _ := cleanAgent(nil)
	got := h.heartbeatUntil(n, h.agentFor(n, a2), "clean failed")
	if msg := deref(got.LastError); !strings.Contains(msg, "deploy.frobnicate is not supported by the agent") {
		t.Errorf("last_error %q", msg)
	}
}
