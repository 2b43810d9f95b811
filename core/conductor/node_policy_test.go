package conductor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/rpc"
	"github.com/rivetmetal/rivet/core/states"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
)

// update applies change to the stored node and sends it through
// update_node, returning the error.
func (h *harness) update(uuid string, change func(n *objects.Node)) error {
	h.t.Helper()
	n := h.node(uuid)
	change(n)
	_, err := h.api.UpdateNode(context.Background(), n)
	return err
}

// active enrolls a node and deploys it.
func (h *harness) active(name string) *objects.Node {
	h.t.Helper()
	n := h.available(name)
	if err := h.api.DoNodeDeploy(context.Background(), n, false, nil); err != nil {
		h.t.Fatal(err)
	}
	return h.waitState(n.UUID, "active")
}

func wantClass(t *testing.T, err error, class string, code int) {
	t.Helper()
	if c, k := classOf(err); c != class || k != code {
		t.Fatalf("err = %v (%s %d), want %s %d", err, c, k, class, code)
	}
}

// Protected nodes (API 1.48) refuse rebuild, tear down and delete with
// NodeProtected (403) and may be protected only when active or rescued.
func TestProtectedNode(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	enrolled := h.enroll("enrolled")
	err := h.update(enrolled.UUID, func(n *objects.Node) { n.Protected = true })
	wantClass(t, err, "InvalidState", http.StatusConflict)
	err = h.update(enrolled.UUID, func(n *objects.Node) { n.ProtectedReason = ptr("why") })
	wantClass(t, err, "InvalidParameterValue", http.StatusBadRequest)

	n := h.active("node-1")
	if err := h.update(n.UUID, func(n *objects.Node) { n.Protected, n.ProtectedReason = true, ptr("prod") }); err != nil {
		t.Fatal(err)
	}
	n = h.node(n.UUID)
	wantClass(t, h.api.DoNodeTearDown(ctx, n), "NodeProtected", http.StatusForbidden)
	wantClass(t, h.api.DoNodeDeploy(ctx, n, true, nil), "NodeProtected", http.StatusForbidden)
	if err := h.update(n.UUID, func(n *objects.Node) { n.Maintenance = true }); err != nil {
		t.Fatal(err)
	}
	err = h.api.DestroyNode(ctx, h.node(n.UUID))
	wantClass(t, err, "NodeProtected", http.StatusForbidden)
	if got := h.node(n.UUID); got.ProvisionState != "active" || got.Reservation != nil {
		t.Fatalf("after refusals: %s, reservation %v", got.ProvisionState, deref(got.Reservation))
	}
	// Unprotecting clears the reason; then tear down goes ahead.
	if err := h.update(n.UUID, func(n *objects.Node) { n.Protected, n.Maintenance = false, false }); err != nil {
		t.Fatal(err)
	}
	if got := h.node(n.UUID); got.ProtectedReason != nil {
		t.Fatalf("protected_reason %q kept after unprotecting", *got.ProtectedReason)
	}
	if err := h.api.DoNodeTearDown(ctx, h.node(n.UUID)); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "available")
}

// Retired nodes (API 1.61) refuse provide, cannot be retired while
// available, and go to manageable after automated cleaning.
func TestRetiredNode(t *testing.T) {
	h := newHarness(t, nil, "cond-a", func(c *Config) { c.AutomatedClean = true })
	ctx := context.Background()
	avail := h.available("avail")
	err := h.update(avail.UUID, func(n *objects.Node) { n.Retired = true })
	wantClass(t, err, "InvalidState", http.StatusConflict)

	n := h.active("node-1")
	if err := h.update(n.UUID, func(n *objects.Node) { n.Retired, n.RetiredReason = true, ptr("eol") }); err != nil {
		t.Fatal(err)
	}
	if err := h.api.DoNodeTearDown(ctx, h.node(n.UUID)); err != nil {
		t.Fatal(err)
	}
	got := h.waitState(n.UUID, "manageable")
	if !got.Retired || deref(got.RetiredReason) != "eol" {
		t.Fatalf("retired %v reason %v", got.Retired, deref(got.RetiredReason))
	}
	err = h.api.DoProvisioningAction(ctx, got, "provide")
	wantClass(t, err, "NodeIsRetired", http.StatusBadRequest)
	if err := h.update(n.UUID, func(n *objects.Node) { n.Retired = false }); err != nil {
		t.Fatal(err)
	}
	if got := h.node(n.UUID); got.RetiredReason != nil {
		t.Fatal("retired_reason kept after un-retiring")
	}
	if err := h.api.DoProvisioningAction(ctx, h.node(n.UUID), "provide"); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "available")
}

// failingClean is fake-hardware whose clean steps fail.
type failingClean struct{ *hookedFake }

func (failingClean) ExecuteCleanStep(context.Context, plugins.Node, plugins.CleanStep) error {
	return errors.New("disk erase failed")
}

// A node's automated_clean (API 1.47) overrides [conductor]
// automated_clean; a failed clean step leaves the node in clean failed and
// maintenance with the fault "clean failure" (1.42), which ending
// maintenance clears.
func TestAutomatedCleanOverrideAndCleanFault(t *testing.T) {
	h := startHarness(t, nil, "cond-a", nil, func(hw *hookedFake) StaticDrivers {
		return StaticDrivers{fake.HardwareType: failingClean{hw}}
	})
	ctx := context.Background()
	// [conductor] automated_clean is off: provide skips the (failing) steps.
	plain := h.enroll("plain")
	h.makeAvailable(plain)

	n := h.enroll("cleaned")
	if err := h.update(n.UUID, func(n *objects.Node) { n.AutomatedClean = ptr(true) }); err != nil {
		t.Fatal(err)
	}
	if err := h.api.DoProvisioningAction(ctx, n, "manage"); err != nil {
		t.Fatal(err)
	}
	h.waitState(n.UUID, "manageable")
	if err := h.api.DoProvisioningAction(ctx, h.node(n.UUID), "provide"); err != nil {
		t.Fatal(err)
	}
	got := h.waitFor(n.UUID, "clean failed in maintenance", func(n *objects.Node) bool {
		return n.ProvisionState == string(states.CleanFailed) && n.Maintenance && n.Reservation == nil
	})
	if deref(got.Fault) != objects.FaultCleanFailure || got.LastError == nil {
		t.Fatalf("fault %q last_error %v", deref(got.Fault), deref(got.LastError))
	}
	if err := h.update(n.UUID, func(n *objects.Node) { n.Maintenance = false }); err != nil {
		t.Fatal(err)
	}
	if got := h.node(n.UUID); got.Fault != nil || got.MaintenanceReason != nil {
		t.Fatalf("after maintenance off: fault %v reason %v", deref(got.Fault), deref(got.MaintenanceReason))
	}

	// And the other way: the node opts out where the conductor opts in.
	h2 := startHarness(t, nil, "cond-b", func(c *Config) { c.AutomatedClean = true }, func(hw *hookedFake) StaticDrivers {
		return StaticDrivers{fake.HardwareType: failingClean{hw}}
	})
	m := h2.enroll("skip")
	if err := h2.update(m.UUID, func(n *objects.Node) { n.AutomatedClean = ptr(false) }); err != nil {
		t.Fatal(err)
	}
	h2.makeAvailable(h2.node(m.UUID))
}

// disable_power_off (API 1.95) refuses every power off, soft or not; a
// reboot still goes ahead.
func TestDisablePowerOff(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.enroll("node-1")
	if err := h.update(n.UUID, func(n *objects.Node) { n.DisablePowerOff = true }); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"power off", "soft power off"} {
		err := h.api.ChangeNodePowerState(ctx, h.node(n.UUID), target, 0)
		wantClass(t, err, "PowerStateFailure", http.StatusConflict)
	}
	if err := h.api.ChangeNodePowerState(ctx, h.node(n.UUID), "rebooting", 0); err != nil {
		t.Fatal(err)
	}
	h.waitFor(n.UUID, "rebooted", func(n *objects.Node) bool { return n.Reservation == nil && deref(n.PowerState) == "power on" })
}

// testRescue is a rescue implementation as a driver would plug in.
type testRescue struct {
	ev      states.Event
	fail    error
	invalid error
}

func (r *testRescue) Validate(context.Context, *objects.Node) error { return r.invalid }
func (r *testRescue) Rescue(context.Context, *Task) (states.Event, error) {
	return r.ev, r.fail
}
func (r *testRescue) Unrescue(context.Context, *Task) error { return r.fail }

// Rescue (API 1.38): with no-rescue, every hardware type's default, the
// verb is refused as Ironic's NoRescue refuses it; a registered rescue
// implementation takes the node through rescue and back.
func TestRescue(t *testing.T) {
	h := newHarness(t, nil, "cond-a", nil)
	ctx := context.Background()
	n := h.active("node-1")
	if deref(n.RescueInterface) != "no-rescue" {
		t.Fatalf("rescue_interface = %q, want no-rescue", deref(n.RescueInterface))
	}
	err := h.api.DoNodeRescue(ctx, n, "pw")
	wantClass(t, err, "InstanceRescueFailure", http.StatusBadRequest)
	want := "Failed to rescue instance None for node " + n.UUID +
		": Validation failed: Driver fake-hardware does not support rescue (disabled or not implemented)."
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("message %q, want %q", err.Error(), want)
	}
	if got := h.node(n.UUID); got.ProvisionState != "active" || got.InstanceInfo["rescue_password"] != nil {
		t.Fatalf("after refusal: %s, instance_info %v", got.ProvisionState, got.InstanceInfo)
	}

	r := &testRescue{ev: states.Done}
	h.svc.rescuers = map[string]RescueInterface{"test-rescue": r}
	// An active node's interfaces change only in maintenance.
	if err := h.update(n.UUID, func(n *objects.Node) { n.RescueInterface, n.Maintenance = ptr("test-rescue"), true }); err != nil {
		t.Fatal(err)
	}
	if err := h.update(n.UUID, func(n *objects.Node) { n.Maintenance = false }); err != nil {
		t.Fatal(err)
	}
	if err := h.api.DoNodeRescue(ctx, h.node(n.UUID), "pw"); err != nil {
		t.Fatal(err)
	}
	got := h.waitState(n.UUID, "rescue")
	if got.InstanceInfo["rescue_password"] != "pw" {
		t.Fatalf("rescue_password not kept for the rescue environment: %v", got.InstanceInfo)
	}
	if err := h.api.DoNodeUnrescue(ctx, got); err != nil {
		t.Fatal(err)
	}
	if got := h.waitState(n.UUID, "active"); got.InstanceInfo["rescue_password"] != nil {
		t.Fatal("unrescue kept the rescue password")
	}
	r.fail = errors.New("ramdisk did not boot")
	if err := h.api.DoNodeRescue(ctx, h.node(n.UUID), "pw"); err != nil {
		t.Fatal(err)
	}
	if got := h.waitState(n.UUID, "rescue failed"); got.LastError == nil || got.InstanceInfo["rescue_password"] != nil {
		t.Fatalf("failed rescue: last_error %v, instance_info %v", deref(got.LastError), got.InstanceInfo)
	}
}

// A conductor with [conductor] conductor_group takes only the nodes of its
// group (API 1.46): the hash ring is per group, so create, update and
// deploy of a node go to the conductor of the node's group, and a group no
// conductor serves has no valid host.
func TestConductorGroupRing(t *testing.T) {
	dbh := dbtest.Open(t, db.SQLite)
	a := newHarness(t, dbh, "cond-a", nil)
	b := newHarness(t, dbh, "cond-b", func(c *Config) { c.Group = "Rack-1" })
	ctx := context.Background()
	// The API's client: each call goes to the host the ring picks.
	hosts := byHost{"cond-a": a.svc.RPCServer(), "cond-b": b.svc.RPCServer()}
	pinner := release.NewPinner(release.Default(), release.Pin{Mode: release.PinLatest})
	a.api.Client = rpc.NewClient(rpc.ConductorMethods(), func() version.Version { return pinner.Effective().RPC },
		rpc.ObjectCodecFor(a.store.Registry(), pinner), hosts)
	name := "grouped"
	n, err := a.api.CreateNode(ctx, &objects.Node{Driver: fake.HardwareType, Name: &name, ConductorGroup: "RACK-1"})
	if err != nil {
		t.Fatal(err)
	}
	if n.ConductorGroup != "rack-1" {
		t.Fatalf("conductor_group = %q, want rack-1", n.ConductorGroup)
	}
	host, err := a.api.Router.HostFor(ctx, target(n))
	if err != nil || host != "cond-b" {
		t.Fatalf("ring maps the rack-1 node to %q, %v; want cond-b", host, err)
	}
	a.makeAvailable(n)
	if err := a.api.DoNodeDeploy(ctx, a.node(n.UUID), false, nil); err != nil {
		t.Fatal(err)
	}
	got := a.waitState(n.UUID, "active")
	var bID int64
	if err := dbh.Bun().NewSelect().Table(db.TableConductors).Column("id").Where("hostname = ?", "cond-b").Scan(ctx, &bID); err != nil {
		t.Fatal(err)
	}
	if got.ConductorAffinity == nil {
		t.Fatal("no conductor_affinity after deploy")
	}
	if *got.ConductorAffinity != bID {
		t.Fatalf("deployed by conductor id %v, want cond-b's %d", *got.ConductorAffinity, bID)
	}
	plain := a.enroll("plain")
	if host, err := b.api.Router.HostFor(ctx, target(plain)); err != nil || host != "cond-a" {
		t.Fatalf("default-group node maps to %q, %v; want cond-a", host, err)
	}
	other := "other"
	_, err = a.api.CreateNode(ctx, &objects.Node{Driver: fake.HardwareType, Name: &other, ConductorGroup: "rack-9"})
	wantClass(t, err, "NoValidHost", http.StatusBadRequest)
}

// byHost is an in-process transport that sends each call to the named
// conductor, as JSON-RPC over the network does.
type byHost map[string]*rpc.Server

func (b byHost) Send(ctx context.Context, host string, req *rpc.Request) (json.RawMessage, error) {
	srv, ok := b[host]
	if !ok {
		return nil, fmt.Errorf("no conductor %s", host)
	}
	return rpc.LocalTransport{Server: srv}.Send(ctx, host, req)
}

func target(n *objects.Node) rpc.Target {
	return rpc.Target{UUID: n.UUID, Driver: n.Driver, Group: n.ConductorGroup}
}
