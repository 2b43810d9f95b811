package plugins_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// recorder is a driver that records each power call with its timeout.
// With soft it implements power interface version 2 and soft_power; without,
// only version 1.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) Describe() plugins.Description {
	return plugins.Description{Name: "recorder", HardwareTypes: []string{"rec"}}
}

func (r *recorder) record(format string, args ...any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf(format, args...))
	return nil
}

func (r *recorder) took() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

func (r *recorder) GetPowerState(context.Context, plugins.Node) (plugins.PowerState, error) {
	return plugins.PowerOff, nil
}
func (r *recorder) SetPowerState(_ context.Context, _ plugins.Node, p plugins.PowerState) error {
	return r.record("set %s", p)
}
func (r *recorder) Reboot(context.Context, plugins.Node) error { return r.record("reboot") }

type recorderV2 struct{ *recorder }

func (r recorderV2) SetPowerStateWithin(_ context.Context, _ plugins.Node, p plugins.PowerState, d time.Duration) error {
	return r.record("set %s within %v", p, d)
}
func (r recorderV2) RebootWithin(_ context.Context, _ plugins.Node, d time.Duration) error {
	return r.record("reboot within %v", d)
}
func (r recorderV2) SoftPowerOff(_ context.Context, _ plugins.Node, d time.Duration) error {
	return r.record("soft power off within %v", d)
}
func (r recorderV2) SoftReboot(_ context.Context, _ plugins.Node, d time.Duration) error {
	return r.record("soft reboot within %v", d)
}

type action struct {
	target  plugins.PowerState
	timeout time.Duration
}

// TestPowerActionDispatch drives every action through each way a conductor
// reaches a driver: the SDK's in-process adapter and the gRPC client at
// protocols 1 and 2, for a version 1 driver and a version 2 driver with
// soft_power. What the driver saw (method and timeout) is compared, and a
// refused action must reach nothing.
func TestPowerActionDispatch(t *testing.T) {
	actions := []action{
		{plugins.PowerOn, 0}, {plugins.PowerOff, 45 * time.Second}, {plugins.Rebooting, 0},
		{plugins.SoftPowerOff, 0}, {plugins.SoftRebooting, 90 * time.Second}, {plugins.PowerError, 0},
	}
	v1Want := []string{"set power on", "", "reboot", "", "", ""}
	v2Want := []string{"set power on within 0s", "set power off within 45s", "reboot within 0s",
		"soft power off within 0s", "soft reboot within 1m30s", ""}
	tests := map[string]struct {
		v2    bool
		actor func(t *testing.T, d plugins.Driver) host.PowerActor
		want  []string // "" refused with ErrNotSupported
	}{
		"local v1":            {false, local, v1Want},
		"local v2":            {true, local, v2Want},
		"grpc protocol 1, v1": {false, grpcAt(1), v1Want},
		"grpc protocol 1, v2": {true, grpcAt(1), v1Want},
		"grpc protocol 2, v1": {false, grpcAt(2), v1Want},
		"grpc protocol 2, v2": {true, grpcAt(2), v2Want},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			var d plugins.Driver = rec
			if tc.v2 {
				d = recorderV2{rec}
			}
			a := tc.actor(t, d)
			for i, act := range actions {
				checkErr := a.CheckPowerAction(act.target, act.timeout)
				err := a.PowerAction(context.Background(), plugins.Node{UUID: "n1"}, act.target, act.timeout)
				got := rec.took()
				if tc.want[i] == "" {
					if !errors.Is(err, plugins.ErrNotSupported) || !errors.Is(checkErr, plugins.ErrNotSupported) {
						t.Errorf("%v: check %v, action %v; want both ErrNotSupported", act, checkErr, err)
					}
					if len(got) != 0 {
						t.Errorf("%v refused, but the driver saw %v", act, got)
					}
					continue
				}
				if err != nil || checkErr != nil {
					t.Errorf("%v: check %v, action %v", act, checkErr, err)
				}
				if diff := cmp.Diff([]string{tc.want[i]}, got); diff != "" {
					t.Errorf("%v (-want +got):\n%s", act, diff)
				}
			}
		})
	}
}

func local(_ *testing.T, d plugins.Driver) host.PowerActor {
	return host.LocalPowerActor(d.(plugins.PowerInterface))
}

func grpcAt(p int) func(t *testing.T, d plugins.Driver) host.PowerActor {
	return func(t *testing.T, d plugins.Driver) host.PowerActor {
		return plugintest.InProcessAt(t, d, p).Driver.(host.PowerActor)
	}
}
