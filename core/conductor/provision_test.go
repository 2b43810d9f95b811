package conductor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/objects"
)

// available enrolls a node and makes it available.
func (h *harness) available(name string) *objects.Node {
	h.t.Helper()
	n := h.enroll(name)
	h.makeAvailable(n)
	return h.waitState(n.UUID, "available")
}

// makeAvailable takes an enrolled node through manage and provide, waiting
// for each to settle and release the node's lock before the next.
func (h *harness) makeAvailable(n *objects.Node) {
	h.t.Helper()
	for _, a := range []string{"manage", "provide"} {
		if err := h.api.DoProvisioningAction(context.Background(), n, a); err != nil {
			h.t.Fatalf("%s: %v", a, err)
		}
		h.waitFor(n.UUID, a, func(n *objects.Node) bool {
			return n.Reservation == nil && (n.ProvisionState == "manageable" || n.ProvisionState == "available")
		})
	}
	h.waitState(n.UUID, "available")
}

// With automated_clean, provide and tear down run the driver's clean
// steps (fake-hardware has two) before the node is available.
func TestAutomatedClean(t *testing.T) {
	h := newHarness(t, nil, "cond-a", func(c *Config) { c.AutomatedClean = true })
	ctx := context.Background()
	n := h.available("node-1")
	if err := h.api.DoNodeDeploy(ctx, n, false, nil); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "active")
	if err := h.api.DoNodeTearDown(ctx, n); err != nil {
		t.Fatal(err)
	}
	got := h.waitState(n.UUID, "available")
	if got.LastError != nil || len(got.CleanStep) != 0 || len(got.InstanceInfo) != 0 {
		t.Fatalf("after tear down with cleaning: last_error %v clean_step %v instance_info %v", deref(got.LastError), got.CleanStep, got.InstanceInfo)
	}
}

// abort ends a wait state in its failure state, with last_error.
func TestAbortWaitCallback(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.waitingNode("node-1")
	if err := h.api.DoProvisioningAction(ctx, n, "abort"); err != nil {
		t.Fatal(err)
	}
	if got := h.waitState(n.UUID, "deploy failed"); got.LastError == nil {
		t.Fatal("abort left no last_error")
	}
	err := h.api.DoProvisioningAction(ctx, n, "abort")
	if class, _ := classOf(err); class != "InvalidStateRequested" {
		t.Fatalf("abort from deploy failed: %v", err)
	}
}

// A driver failure's last_error names the driver, the BMC (by address)
// and the operation, and never a secret of driver_info.
func TestLastErrorNeverHoldsSecrets(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.enroll("node-1")
	n.DriverInfo = map[string]any{"redfish_address": "https://10.1.2.3", "redfish_password": "hunter2", "redfish_username": "admin"}
	if _, err := h.api.UpdateNode(ctx, n); err != nil {
		t.Fatal(err)
	}
	h.hw.set(func(f *hookedFake) { f.failPower = errors.New("HTTP 401 from BMC") })
	if err := h.api.ChangeNodePowerState(ctx, n, "power on", 0); err != nil {
		t.Fatal(err)
	}
	got := h.waitFor(n.UUID, "a recorded failure", func(n *objects.Node) bool { return n.LastError != nil && n.Reservation == nil })
	le := *got.LastError
	for _, want := range []string{"fake-hardware", "BMC https://10.1.2.3", "set power state to power on", "HTTP 401"} {
		if !strings.Contains(le, want) {
			t.Errorf("last_error %q lacks %q", le, want)
		}
	}
	if strings.Contains(le, "hunter2") {
		t.Fatalf("last_error leaks the BMC password: %q", le)
	}
}

// A deploy whose instance_info a ramdisk deploy cannot use is refused
// before anything changes (Ironic's 400).
func TestDeployValidation(t *testing.T) {
	// ipmi is served by the fake too: the check is the conductor's.
	h := newHarness(t, nil, "cond-a", nil, "ipmi")
	ctx := context.Background()
	n := h.available("node-1")
	row := h.node(n.UUID)
	row.Driver, row.DriverInfo = "ipmi", map[string]any{"ipmi_address": "10.0.0.9"}
	for _, iface := range catalog.Types() {
		*row.InterfaceField(iface) = nil // fake-hardware's: ipmi uses its defaults
	}
	if err := h.store.Save(ctx, row); err != nil {
		t.Fatal(err)
	}
	_, err := h.api.Client.Call(ctx, h.svc.Hostname(), "do_node_deploy", map[string]any{"node_id": n.UUID})
	class, code := classOf(err)
	if class != "InstanceDeployFailure" || code != 400 || !strings.Contains(err.Error(), "boot_iso") {
		t.Fatalf("deploy without instance_info: %v (%s %d)", err, class, code)
	}
	if got := h.node(n.UUID); got.ProvisionState != "available" || got.Reservation != nil {
		t.Fatalf("refused deploy changed the node: %q %v", got.ProvisionState, deref(got.Reservation))
	}
}

// A node waiting for its agent longer than deploy_callback_timeout fails
// at the next takeover check.
func TestDeployCallbackTimeout(t *testing.T) {
	h := newHarness(t, nil, "cond-a", func(c *Config) { c.DeployCallbackTimeout = 50 * time.Millisecond })
	ctx := context.Background()
	n := h.waitingNode("node-1")
	if got := h.svc.checkOrphans(ctx); got != 0 {
		t.Fatalf("checkOrphans failed %d nodes before the timeout", got)
	}
	time.Sleep(100 * time.Millisecond)
	if got := h.svc.checkOrphans(ctx); got != 1 {
		t.Fatalf("checkOrphans recovered %d nodes after the timeout, want 1", got)
	}
	got := h.waitState(n.UUID, "deploy failed")
	if !strings.Contains(deref(got.LastError), "Timeout reached while waiting for callback") {
		t.Fatalf("last_error %q", deref(got.LastError))
	}
}

// TestDeployNeedsBootServer: a network-boot (ipmi) deploy on a conductor
// that serves no iPXE scripts is refused by validation and by the deploy,
// naming the option, instead of power-cycling the node into nothing and
// calling it active; with boot_http_address set it goes ahead.
func TestDeployNeedsBootServer(t *testing.T) {
	for name, addr := range map[string]string{"no boot server": "", "boot server": "127.0.0.1:0"} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil, "cond-a", func(c *Config) { c.BootHTTPAddress = addr }, "ipmi")
			ctx := context.Background()
			n := h.available("node-1")
			row := h.node(n.UUID)
			row.Driver, row.DriverInfo = "ipmi", map[string]any{"ipmi_address": "10.0.0.9"}
			row.InstanceInfo = map[string]any{"boot_iso": "http://images.example.test/ramdisk.iso"}
			for _, iface := range catalog.Types() {
				*row.InterfaceField(iface) = nil
			}
			if err := h.store.Save(ctx, row); err != nil {
				t.Fatal(err)
			}
			v, err := h.api.ValidateDriverInterfaces(ctx, h.node(n.UUID))
			if err != nil {
				t.Fatal(err)
			}
			_, derr := h.api.Client.Call(ctx, h.svc.Hostname(), "do_node_deploy", map[string]any{"node_id": n.UUID})
			if addr != "" {
				if !v["boot"].Result || !v["deploy"].Result {
					t.Errorf("validate with a boot server: boot %+v deploy %+v", v["boot"], v["deploy"])
				}
				if derr != nil {
					t.Errorf("deploy with a boot server: %v", derr)
				}
				return
			}
			for _, iface := range []string{"boot", "deploy"} {
				if v[iface].Result || !strings.Contains(deref(v[iface].Reason), "boot_http_address") {
					t.Errorf("validate %s without a boot server: %v %q", iface, v[iface].Result, deref(v[iface].Reason))
				}
			}
			class, code := classOf(derr)
			if class != "InstanceDeployFailure" || code != 400 || !strings.Contains(derr.Error(), "boot_http_address") {
				t.Errorf("deploy without a boot server: %v (%s %d)", derr, class, code)
			}
			if got := h.node(n.UUID); got.ProvisionState != "available" {
				t.Errorf("refused deploy moved the node to %q", got.ProvisionState)
			}
		})
	}
}
