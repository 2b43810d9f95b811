package host_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
)

// observer records what a Manager reports.
type observer struct {
	mu       sync.Mutex
	calls    []string // "hardware type/call/error?"
	restarts []string
}

func (o *observer) DriverCall(hw, call string, _ time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, hw+"/"+call+"/"+map[bool]string{true: "error", false: "ok"}[err != nil])
}

func (o *observer) PluginRestarted(driver string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.restarts = append(o.restarts, driver)
}

// Sensors travel over protocol 2's Sensors service; a plugin serving only
// protocol 1 (an older SDK) does not advertise them and is answered
// ErrNotSupported without a round trip. The Observer sees each call.
func TestSensorDataByProtocol(t *testing.T) {
	for name, protocols := range map[string]string{"protocol 1": "1", "protocols 1,2": "1,2"} {
		t.Run(name, func(t *testing.T) {
			obs := &observer{}
			m, d := startTestHost(t, host.Config{Observer: obs,
				BuiltIn: map[string]host.Command{"test": {Path: testPluginBin, Env: []string{"RIVET_TESTPLUGIN_PROTOCOLS=" + protocols}}}})
			defer m.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			reg, _ := d.Registration()
			got, err := d.GetSensorData(ctx, plugins.Node{UUID: "n1", Name: "rack2-n1"})
			if protocols == "1" {
				if reg.Has(plugins.CapabilitySensors) || !errors.Is(err, plugins.ErrNotSupported) {
					t.Fatalf("protocol 1: capabilities %v, GetSensorData %v, %v; want ErrNotSupported", reg.Capabilities, got, err)
				}
				if len(obs.calls) != 0 {
					t.Errorf("a refused call reached the plugin: %v", obs.calls)
				}
				return
			}
			if err != nil || !reg.Has(plugins.CapabilitySensors) {
				t.Fatalf("GetSensorData: %v (capabilities %v)", err, reg.Capabilities)
			}
			want := []plugins.Sensor{
				{Type: plugins.SensorTemperature, Name: "CPU Temp", Value: 47.5, Unit: "Cel", Health: "OK"},
				{Type: plugins.SensorPower, Name: "Input rack2-n1", Value: 180, Unit: "W"},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("sensors (-want +got):\n%s", diff)
			}
			if _, err := d.GetPowerState(ctx, plugins.Node{UUID: "n1"}); err != nil {
				t.Fatal(err)
			}
			obs.mu.Lock()
			defer obs.mu.Unlock()
			if diff := cmp.Diff([]string{"test-hardware/get sensor data/ok", "test-hardware/get power state/ok"}, obs.calls); diff != "" {
				t.Errorf("observed calls (-want +got):\n%s", diff)
			}
		})
	}
}

// A plugin started again after a crash is reported to the Observer; its
// first start is not.
func TestObserverSeesRestart(t *testing.T) {
	obs := &observer{}
	m, d := startTestHost(t, host.Config{Observer: obs, RestartBackoff: time.Millisecond,
		BuiltIn: map[string]host.Command{"test": {Path: testPluginBin, Env: []string{"RIVET_TESTPLUGIN_CRASH_AFTER=1"}}}})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := plugins.Node{UUID: "n1"}
	if _, err := d.GetPowerState(ctx, n); err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	if len(obs.restarts) != 0 {
		t.Fatalf("restarts %v before any crash", obs.restarts)
	}
	obs.mu.Unlock()
	if _, err := d.GetPowerState(ctx, n); err == nil {
		t.Fatal("the second call did not crash the plugin")
	}
	if _, err := d.GetPowerState(ctx, n); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if diff := cmp.Diff([]string{"test"}, obs.restarts); diff != "" {
		t.Errorf("restarts (-want +got):\n%s", diff)
	}
	if len(obs.calls) != 3 || obs.calls[1] != "test-hardware/get power state/error" {
		t.Errorf("observed calls %v", obs.calls)
	}
}
