// Command testplugin is a minimal driver plugin for the host's tests. It
// serves the protocol majors listed in $RIVET_TESTPLUGIN_PROTOCOLS (default
// the SDK's), so negotiation can be tested against majors that do not exist
// yet, and it sleeps in GetPowerState for driver_info["sleep_ms"]
// milliseconds, so a test can kill it during a call.
//
// For crash-loop tests: $RIVET_TESTPLUGIN_STARTS names a file it appends
// "<unix nanoseconds> <pid>" to as it starts; $RIVET_TESTPLUGIN_CRASH_AT_START=1
// makes it exit at once (status 3); $RIVET_TESTPLUGIN_CRASH_AFTER=N makes
// the call after the N-th power call of each process exit it (status 2).
//
// For crash-during-action tests: $RIVET_TESTPLUGIN_STATE names a JSON file
// holding the power states, so they survive the process as a BMC's do;
// $RIVET_TESTPLUGIN_CRASH_APPLIED=1 makes a crashing power change apply
// first and exit after, as a plugin killed after the BMC acted does.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rivetmetal/rivet/plugins"
)

type driver struct {
	mu           sync.Mutex
	power        map[string]plugins.PowerState
	calls        int
	crashAfter   int    // < 0: never
	stateFile    string // "": power states live in memory only
	crashApplied bool   // a crashing change applies before the exit
}

// call counts a power call and exits the process when crashAfter calls
// have been served; with crashApplied a change (apply non-nil) is applied
// first.
func (d *driver) call(apply func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.crashAfter >= 0 && d.calls >= d.crashAfter {
		if apply != nil && d.crashApplied {
			apply()
			d.save()
		}
		fmt.Fprintf(os.Stderr, "testplugin: crashing on call %d as RIVET_TESTPLUGIN_CRASH_AFTER says\n", d.calls+1)
		os.Exit(2)
	}
	d.calls++
}

// load reads the power states from the state file, if any.
func (d *driver) load() {
	if d.stateFile == "" {
		return
	}
	if b, err := os.ReadFile(d.stateFile); err == nil {
		_ = json.Unmarshal(b, &d.power)
	}
}

// save writes the power states to the state file, if any (d.mu held).
func (d *driver) save() {
	if d.stateFile == "" {
		return
	}
	b, _ := json.Marshal(d.power)
	tmp := d.stateFile + ".tmp"
	if os.WriteFile(tmp, b, 0o644) == nil {
		_ = os.Rename(tmp, d.stateFile)
	}
}

func (d *driver) Describe() plugins.Description {
	return plugins.Description{Name: "test", Version: "0.0.1", HardwareTypes: []string{"test-hardware"}}
}

func (d *driver) GetPowerState(ctx context.Context, n plugins.Node) (plugins.PowerState, error) {
	d.call(nil)
	if ms, ok := n.DriverInfo["sleep_ms"].(float64); ok {
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if p, ok := d.power[n.UUID]; ok {
		return p, nil
	}
	return plugins.PowerOff, nil
}

func (d *driver) SetPowerState(_ context.Context, n plugins.Node, p plugins.PowerState) error {
	d.call(func() { d.power[n.UUID] = p })
	d.mu.Lock()
	defer d.mu.Unlock()
	d.power[n.UUID] = p
	d.save()
	return nil
}

func (d *driver) Reboot(ctx context.Context, n plugins.Node) error {
	return d.SetPowerState(ctx, n, plugins.PowerOn)
}

// The power interface version 2 methods: timeouts are moot, every change
// is immediate.

func (d *driver) SetPowerStateWithin(ctx context.Context, n plugins.Node, p plugins.PowerState, _ time.Duration) error {
	return d.SetPowerState(ctx, n, p)
}

func (d *driver) RebootWithin(ctx context.Context, n plugins.Node, _ time.Duration) error {
	return d.Reboot(ctx, n)
}

func (d *driver) SoftPowerOff(ctx context.Context, n plugins.Node, _ time.Duration) error {
	return d.SetPowerState(ctx, n, plugins.PowerOff)
}

func (d *driver) SoftReboot(ctx context.Context, n plugins.Node, _ time.Duration) error {
	return d.Reboot(ctx, n)
}

func main() {
	if path := os.Getenv("RIVET_TESTPLUGIN_STARTS"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d %d\n", time.Now().UnixNano(), os.Getpid())
			f.Close()
		}
	}
	if os.Getenv("RIVET_TESTPLUGIN_CRASH_AT_START") == "1" {
		fmt.Fprintln(os.Stderr, "testplugin: crashing at start as RIVET_TESTPLUGIN_CRASH_AT_START says")
		os.Exit(3)
	}
	crashAfter := -1
	if env := os.Getenv("RIVET_TESTPLUGIN_CRASH_AFTER"); env != "" {
		n, err := strconv.Atoi(env)
		if err != nil || n < 0 {
			fmt.Fprintln(os.Stderr, "testplugin: bad RIVET_TESTPLUGIN_CRASH_AFTER:", env)
			os.Exit(1)
		}
		crashAfter = n
	}
	log := plugins.NewLogger(slog.LevelInfo)
	var protocols []int
	if env := os.Getenv("RIVET_TESTPLUGIN_PROTOCOLS"); env != "" {
		for _, f := range strings.Split(env, ",") {
			v, err := strconv.Atoi(f)
			if err != nil {
				fmt.Fprintln(os.Stderr, "testplugin: bad RIVET_TESTPLUGIN_PROTOCOLS:", env)
				os.Exit(1)
			}
			protocols = append(protocols, v)
		}
	}
	log.Info("testplugin starting", "pid", os.Getpid(), "ipmi_password", "hunter2")
	d := &driver{power: map[string]plugins.PowerState{}, crashAfter: crashAfter,
		stateFile: os.Getenv("RIVET_TESTPLUGIN_STATE"), crashApplied: os.Getenv("RIVET_TESTPLUGIN_CRASH_APPLIED") == "1"}
	d.load()
	plugins.Serve(plugins.ServeConfig{Driver: d, Logger: log, Protocols: protocols})
}

// GetSensorData reports two readings, the second with the node's name, so
// a test sees the node cross the wire.
func (d *driver) GetSensorData(_ context.Context, n plugins.Node) ([]plugins.Sensor, error) {
	return []plugins.Sensor{
		{Type: plugins.SensorTemperature, Name: "CPU Temp", Value: 47.5, Unit: "Cel", Health: "OK"},
		{Type: plugins.SensorPower, Name: "Input " + n.Name, Value: 180, Unit: "W"},
	}, nil
}
