package conductor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/rpc"
)

// owner returns the conductor the ring maps the node to now.
func (c *cluster) owner(uuid string) string {
	c.t.Helper()
	ctx := context.Background()
	if err := c.route.Refresh(ctx); err != nil {
		c.t.Fatal(err)
	}
	host, err := c.route.HostFor(ctx, rpc.Target{UUID: uuid, Driver: "fake-hardware"})
	if err != nil {
		c.t.Fatal(err)
	}
	return host
}

// (a) The conductor deploying a node is killed with SIGKILL mid-deploy:
// within heartbeat_timeout plus a takeover check the survivor holds the
// node in a defined state (deploy failed, last_error naming the dead
// conductor), leaves no lease behind, and can deploy it again.
func TestKillDuringDeploy(t *testing.T) {
	c := newCluster(t)
	a, b := c.start("a"), c.start("b")
	procs := map[string]*proc{a.name: a, b.name: b}
	ctx := context.Background()
	n := c.available("slow-1", map[string]any{"fake_deploy_delay": 60})
	victim := procs[c.owner(n.UUID)]
	survivor := a
	if victim == a {
		survivor = b
	}
	if err := c.api.DoNodeDeploy(ctx, n, false, nil); err != nil {
		t.Fatalf("deploy: %v", err)
	}
	got := c.node(n.UUID)
	if got.ProvisionState != "deploying" || deref(got.Reservation) != victim.name {
		t.Fatalf("after do_node_deploy: state %q holder %q, want deploying held by %s", got.ProvisionState, deref(got.Reservation), victim.name)
	}
	victim.signal(t, syscall.SIGKILL)
	<-victim.done

	took := c.waitUntil(heartbeatTimeout+2*checkInterval+10*time.Second, "takeover by the survivor", func() bool {
		got = c.node(n.UUID)
		return got.ProvisionState == "deploy failed" && got.Reservation == nil
	})
	t.Logf("node recovered %v after SIGKILL (heartbeat_timeout %v, check interval %v)", took, heartbeatTimeout, checkInterval)
	if le := deref(got.LastError); !strings.Contains(le, victim.name) || !strings.Contains(le, survivor.name) {
		t.Fatalf("last_error %q does not name the dead conductor %s and the survivor %s", le, victim.name, survivor.name)
	}
	if o := c.owner(n.UUID); o != survivor.name {
		t.Fatalf("ring maps the node to %s, want the survivor %s", o, survivor.name)
	}
	// The survivor owns it for real: a quick redeploy ends active, with
	// the survivor's affinity.
	got.DriverInfo = map[string]any{"fake_deploy_delay": 0}
	if _, err := c.api.UpdateNode(ctx, got); err != nil {
		t.Fatalf("update_node on the survivor: %v", err)
	}
	if err := c.api.DoNodeDeploy(ctx, got, false, nil); err != nil {
		t.Fatalf("redeploy on the survivor: %v", err)
	}
	c.waitUntil(10*time.Second, "redeploy active", func() bool {
		got = c.node(n.UUID)
		return got.ProvisionState == "active" && got.Reservation == nil
	})
	if got.ConductorAffinity == nil {
		t.Fatal("redeployed node has no conductor_affinity")
	}
}

// (b) SIGTERM while the conductor deploys a node: it goes offline at once
// (the ring moves; the survivor answers NodeLocked for the node, since the
// draining conductor keeps its lease and heartbeats), the deploy finishes,
// no lease is left and the process exits 0.
func TestSIGTERMDuringDeploy(t *testing.T) {
	c := newCluster(t)
	a, b := c.start("a"), c.start("b")
	procs := map[string]*proc{a.name: a, b.name: b}
	ctx := context.Background()
	n := c.available("slow-2", map[string]any{"fake_deploy_delay": 4})
	victim := procs[c.owner(n.UUID)]
	survivor := a
	if victim == a {
		survivor = b
	}
	if err := c.api.DoNodeDeploy(ctx, n, false, nil); err != nil {
		t.Fatalf("deploy: %v", err)
	}
	victim.signal(t, syscall.SIGTERM)
	c.waitUntil(5*time.Second, "draining conductor out of the ring", func() bool {
		live := c.live()
		return len(live) == 1 && live[0] == survivor.name
	})
	err := c.api.ChangeNodePowerState(ctx, n, "power on", 0)
	var cl rpc.Classed
	if !errors.As(err, &cl) || cl.ErrorClass() != "NodeLocked" || !strings.Contains(err.Error(), victim.name) {
		t.Fatalf("power call during the drain = %v, want NodeLocked by %s from the survivor", err, victim.name)
	}
	select {
	case <-victim.done:
	case <-time.After(30 * time.Second):
		t.Fatal("conductor did not exit within 30s of SIGTERM")
	}
	if testing.Verbose() {
		t.Logf("stopped conductor's output:\n%s", victim.log.String())
	}
	if victim.err != nil {
		t.Fatalf("conductor exit: %v, want exit status 0\n%s", victim.err, victim.log.String())
	}
	got := c.node(n.UUID)
	if got.ProvisionState != "active" || got.Reservation != nil || got.LastError != nil {
		t.Fatalf("after graceful stop: state %q holder %q last_error %q", got.ProvisionState, deref(got.Reservation), deref(got.LastError))
	}
	svcs, err := c.dbh.Services(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range svcs {
		if s.Hostname == victim.name && s.Online {
			t.Fatalf("stopped conductor's services row still online: %+v", s)
		}
	}
}

// SIGHUP reloads pin_release_version without a restart: the services row
// shows the new pin at the next heartbeat and the conductor keeps serving.
func TestSIGHUPReloadsPin(t *testing.T) {
	c := newCluster(t)
	a := c.start("a")
	conf, err := os.ReadFile(a.conf)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(conf), "[DEFAULT]\n", "[DEFAULT]\npin_release_version = auto\n", 1)
	if err := os.WriteFile(a.conf, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	a.signal(t, syscall.SIGHUP)
	ctx := context.Background()
	c.waitUntil(10*time.Second, "services row with the reloaded pin", func() bool {
		svcs, err := c.dbh.LiveServices(ctx, heartbeatTimeout)
		if err != nil {
			t.Fatal(err)
		}
		return len(svcs) == 1 && svcs[0].Pin != nil && *svcs[0].Pin == "auto"
	})
	if _, err := c.api.GetDriverProperties(ctx, "fake-hardware"); err != nil {
		t.Fatalf("conductor stopped serving after SIGHUP: %v", err)
	}
	select {
	case <-a.done:
		t.Fatalf("conductor exited on SIGHUP: %v", a.err)
	default:
	}
}

// TestKilledConductorIsNamedToClients is issue 31's dead conductor, which
// clients were told was "The database cannot be reached" until its
// heartbeat expired: the API answers 503 naming the conductor and that
// nothing listens at its address. The heartbeat timeout is long here, so
// the answer does not depend on how fast the test runs.
func TestKilledConductorIsNamedToClients(t *testing.T) {
	c := newCluster(t)
	long := "RIVET_CONDUCTOR_HEARTBEAT_TIMEOUT=600"
	a := c.startEnv("a", long)
	n := c.available("dead-owner", nil)
	port := freePort(t)
	c.startAPI(port, long)
	a.signal(t, syscall.SIGKILL)
	<-a.done
	status, body := mustREST(t, fmt.Sprintf("http://127.0.0.1:%d", port), "PUT", "/v1/nodes/"+n.UUID+"/states/power", `{"target": "power on"}`)
	want := "The conductor " + a.name + " that manages this resource cannot be reached: nothing listens at its JSON-RPC address"
	if status != 503 || !strings.Contains(body, want) || strings.Contains(body, "database") {
		t.Fatalf("power on with its conductor killed: %d %s, want 503 with %q", status, body, want)
	}
}
