package conductor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
)

// agentInspecting enrolls a manageable node with the agent inspect
// interface and a ramdisk, starts its inspection and waits for inspect
// wait.
func (h *harness) agentInspecting(name string, driverInfo map[string]any) *objects.Node {
	h.t.Helper()
	ctx := context.Background()
	n := h.enroll(name)
	n.InspectInterface = ptr("agent")
	n.DriverInfo = driverInfo
	if _, err := h.api.UpdateNode(ctx, n); err != nil {
		h.t.Fatal(err)
	}
	if err := h.api.DoProvisioningAction(ctx, n, "manage"); err != nil {
		h.t.Fatal(err)
	}
	h.waitState(n.UUID, "manageable")
	if err := h.api.InspectHardware(ctx, n); err != nil {
		h.t.Fatal(err)
	}
	return h.waitState(n.UUID, "inspect wait")
}

// TestInspectWaitTimeout: a node waiting in inspect wait longer than
// inspect_wait_timeout fails at the next takeover check with Ironic's
// last_error, powered off, its lookup addresses and token gone.
func TestInspectWaitTimeout(t *testing.T) {
	h := newHarness(t, nil, "cond-a", func(c *Config) { c.InspectWaitTimeout = 2 * time.Second })
	ctx := context.Background()
	n := h.agentInspecting("node-1", map[string]any{"deploy_iso": "http://images.test/ipa.iso", "ipmi_address": "192.0.2.7"})
	if got := n.DriverInternalInfo[LookupBMCAddressesKey]; len(got.([]any)) != 1 || got.([]any)[0] != "192.0.2.7" {
		t.Fatalf("lookup_bmc_addresses = %v, want the BMC's address", got)
	}
	if got := h.svc.checkOrphans(ctx); got != 0 {
		t.Fatalf("checkOrphans failed %d nodes before the timeout", got)
	}
	// A node in maintenance waits on, as Ironic's check skips it.
	m := h.agentInspecting("node-m", map[string]any{"deploy_iso": "http://images.test/ipa.iso"})
	row := h.node(m.UUID)
	row.Maintenance = true
	if err := h.store.Save(ctx, row); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond)
	if got := h.svc.checkOrphans(ctx); got != 1 {
		t.Fatalf("checkOrphans recovered %d nodes after the timeout, want 1", got)
	}
	if got := h.node(m.UUID); got.ProvisionState != "inspect wait" {
		t.Errorf("a node in maintenance timed out: %q", got.ProvisionState)
	}
	got := h.waitState(n.UUID, "inspect failed")
	if deref(got.LastError) != "timeout reached while inspecting the node" || deref(got.PowerState) != "power off" {
		t.Fatalf("last_error %q, power %q", deref(got.LastError), deref(got.PowerState))
	}
	if _, ok := got.DriverInternalInfo[LookupBMCAddressesKey]; ok {
		t.Error("lookup_bmc_addresses kept after the timeout")
	}
}

// TestContinueInspectionStates: continue_inspection is refused with
// NotFound for a node not in inspect wait, and processes the data of one
// that is; bmcLookupAddresses reduces URLs to hosts and drops loopback.
func TestContinueInspectionStates(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	idle := h.enroll("idle")
	inv := map[string]any{"interfaces": []any{map[string]any{"name": "eth0", "mac_address": "52:54:00:00:00:01", "ipv4_address": "10.0.0.2"}},
		"cpu": map[string]any{"count": float64(4), "architecture": "aarch64"}, "memory": map[string]any{"physical_mb": float64(2048)}}
	_, err := h.api.Client.Call(ctx, h.svc.Hostname(), "continue_inspection", map[string]any{"node_id": idle.UUID, "inventory": inv, "plugin_data": map[string]any{}})
	if class, code := classOf(err); class != "NotFound" || code != 404 {
		t.Fatalf("continue_inspection of an enrolled node: %v (%s %d)", err, class, code)
	}
	n := h.agentInspecting("node-2", map[string]any{"deploy_kernel": "http://i.test/k", "deploy_ramdisk": "http://i.test/r"})
	if err := h.api.ContinueInspection(ctx, n, inv, map[string]any{"logs": "eHl6", "bmc_password": "hunter2"}); err != nil {
		t.Fatal(err)
	}
	done := h.waitState(n.UUID, "manageable")
	if p := done.Properties; p["cpu_arch"] != "aarch64" || fmt.Sprint(p["cpus"]) != "4" || fmt.Sprint(p["memory_mb"]) != "2048" {
		t.Errorf("properties = %v", done.Properties)
	}
	row, err := h.store.DB().NodeInventoryOf(ctx, done.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(row.PluginData); strings.Contains(s, "hunter2") || strings.Contains(s, "eHl6") {
		t.Errorf("stored plugin data keeps a secret or the logs: %s", s)
	}

	addrs := bmcLookupAddresses(ctx, map[string]any{"redfish_address": "https://[2001:db8::5]:8443/redfish", "ipmi_address": "127.0.0.1",
		"deploy_kernel": "http://i.test/k", "other_address": 7})
	if len(addrs) != 1 || addrs[0] != "2001:db8::5" {
		t.Errorf("bmcLookupAddresses = %v, want the redfish host only", addrs)
	}
}
