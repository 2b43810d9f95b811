package plugins_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// hardV2 implements power interface version 2 without soft power: a valid
// driver, which advertises no soft_power.
type hardV2 struct {
	*recorder
}

func (r hardV2) SetPowerStateWithin(_ context.Context, _ plugins.Node, p plugins.PowerState, d time.Duration) error {
	return r.record("set %s within %v", p, d)
}
func (r hardV2) RebootWithin(_ context.Context, _ plugins.Node, d time.Duration) error {
	return r.record("reboot within %v", d)
}

// TestCheckPowerActionWithoutSoftPower: over gRPC at protocol 2, a power
// version 2 driver without soft power gets its soft actions refused by
// CheckPowerAction before anything is sent, as the host and the local
// adapter refuse them. Before the fix the client's check passed them.
func TestCheckPowerActionWithoutSoftPower(t *testing.T) {
	for name, actor := range map[string]func(*testing.T, plugins.Driver) host.PowerActor{
		"local": local, "grpc protocol 2": grpcAt(2),
	} {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			a := actor(t, hardV2{rec})
			for _, target := range []plugins.PowerState{plugins.SoftPowerOff, plugins.SoftRebooting} {
				if err := a.CheckPowerAction(target, 0); !errors.Is(err, plugins.ErrNotSupported) {
					t.Errorf("check %s: %v, want ErrNotSupported", target, err)
				}
			}
			if err := a.CheckPowerAction(plugins.PowerOff, time.Minute); err != nil {
				t.Errorf("check power off with a timeout: %v", err)
			}
			if got := rec.took(); len(got) != 0 {
				t.Errorf("checks reached the driver: %v", got)
			}
		})
	}
}

// statefulHardV2 is hardV2 with a power state, for the conformance suite.
type statefulHardV2 struct {
	mu    sync.Mutex
	state plugins.PowerState
}

func (d *statefulHardV2) Describe() plugins.Description {
	return plugins.Description{Name: "hardv2", HardwareTypes: []string{"hardv2"}}
}
func (d *statefulHardV2) GetPowerState(context.Context, plugins.Node) (plugins.PowerState, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.state == "" {
		return plugins.PowerOff, nil
	}
	return d.state, nil
}
func (d *statefulHardV2) SetPowerState(_ context.Context, _ plugins.Node, p plugins.PowerState) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.state = p
	return nil
}
func (d *statefulHardV2) Reboot(context.Context, plugins.Node) error {
	return d.SetPowerState(context.Background(), plugins.Node{}, plugins.PowerOn)
}
func (d *statefulHardV2) SetPowerStateWithin(ctx context.Context, n plugins.Node, p plugins.PowerState, _ time.Duration) error {
	return d.SetPowerState(ctx, n, p)
}
func (d *statefulHardV2) RebootWithin(ctx context.Context, n plugins.Node, _ time.Duration) error {
	return d.Reboot(ctx, n)
}

// TestConformanceHardV2InProcess: the conformance kit passes a valid
// driver serving power version 2 without soft power at every level it can
// reach in process.
func TestConformanceHardV2InProcess(t *testing.T) {
	node := plugins.Node{UUID: "6f1d0c7e-7b1e-4d8e-9a55-2b8f0e4c1a10", HardwareType: "hardv2"}
	t.Run("direct", func(t *testing.T) { plugintest.Run(t, plugintest.Direct(t, &statefulHardV2{}), node) })
	t.Run("in-process", func(t *testing.T) { plugintest.Run(t, plugintest.InProcess(t, &statefulHardV2{}), node) })
}
