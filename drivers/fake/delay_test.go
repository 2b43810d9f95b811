package fake_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
)

// fake_deploy_delay makes Deploy last that long; cancelling ctx ends it
// early with the context's error and the node not deployed.
func TestDeployDelay(t *testing.T) {
	d := fake.New(nil)
	node := plugins.Node{UUID: "n1", DriverInfo: plugins.DriverInfo{fake.DeployDelayKey: 0.05}}
	start := time.Now()
	if err := d.Deploy(context.Background(), node); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Fatalf("Deploy with a 50ms delay returned after %v", took)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	node.UUID, node.DriverInfo[fake.DeployDelayKey] = "n2", "30"
	if err := d.Deploy(ctx, node); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Deploy = %v, want context.Canceled", err)
	}
	if ps, _ := d.GetPowerState(context.Background(), node); ps != plugins.PowerOff {
		t.Fatalf("cancelled deploy powered the node on (%s)", ps)
	}
}

// fake_soft_power_delay is how long the simulated OS takes to act on a soft
// action: a shorter timeout fails and leaves the power state alone; a
// longer one sees the node reach the final state.
func TestSoftPowerDelay(t *testing.T) {
	ctx := context.Background()
	d := fake.New(nil)
	node := plugins.Node{UUID: "n1", DriverInfo: plugins.DriverInfo{fake.SoftPowerDelayKey: 0.2}}
	if err := d.SetPowerState(ctx, node, plugins.PowerOn); err != nil {
		t.Fatal(err)
	}
	err := d.SoftPowerOff(ctx, node, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not act within 50ms") {
		t.Fatalf("soft power off with a short timeout: %v", err)
	}
	if ps, _ := d.GetPowerState(ctx, node); ps != plugins.PowerOn {
		t.Fatalf("a timed-out soft power off left the node %s", ps)
	}
	if err := d.SoftPowerOff(ctx, node, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if ps, _ := d.GetPowerState(ctx, node); ps != plugins.PowerOff {
		t.Fatalf("after soft power off: %s", ps)
	}
	// Off: a soft reboot has no OS to ask and powers on at once, even with
	// a timeout shorter than the OS would take.
	if err := d.SoftReboot(ctx, node, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := d.SoftReboot(ctx, node, time.Millisecond); err == nil {
		t.Fatal("soft reboot of a running node within 1ms succeeded; the OS takes 200ms")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := d.SoftReboot(cctx, node, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled soft reboot: %v", err)
	}
}

// fake_power_delay makes reading the power state take that long (a BMC's
// latency); cancelling ctx ends the wait with the context's error. Setting
// the power state is not delayed.
func TestPowerDelay(t *testing.T) {
	ctx := context.Background()
	d := fake.New(nil)
	node := plugins.Node{UUID: "n1", DriverInfo: plugins.DriverInfo{fake.PowerDelayKey: 0.05}}
	start := time.Now()
	ps, err := d.GetPowerState(ctx, node)
	if err != nil || ps != plugins.PowerOff {
		t.Fatalf("GetPowerState = %q, %v; want power off", ps, err)
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Fatalf("GetPowerState with a 50ms delay returned after %v", took)
	}
	if err := d.SetPowerState(ctx, node, plugins.PowerOn); err != nil {
		t.Fatal(err)
	}
	if ps, err := d.GetPowerState(ctx, node); err != nil || ps != plugins.PowerOn {
		t.Fatalf("after power on: %q, %v", ps, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	node.DriverInfo[fake.PowerDelayKey] = "30"
	if _, err := d.GetPowerState(cctx, node); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled GetPowerState = %v, want context.Canceled", err)
	}
	// Invalid or absent: no delay.
	for _, v := range []any{"soon", -1, nil} {
		node.DriverInfo[fake.PowerDelayKey] = v
		if _, err := d.GetPowerState(cctx, node); err != nil {
			t.Fatalf("GetPowerState with %s=%v: %v", fake.PowerDelayKey, v, err)
		}
	}
}
