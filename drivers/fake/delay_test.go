package fake_test

import (
	"context"
	"errors"
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
