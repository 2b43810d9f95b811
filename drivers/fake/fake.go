package fake

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rivetmetal/rivet/plugins"
)

// HardwareType is the Ironic hardware type this driver serves.
const HardwareType = "fake-hardware"

// Version is the fake driver's own release.
const Version = "1.0.0"

// Driver is the fake-hardware driver. The zero value is not usable; call New.
type Driver struct {
	log   *slog.Logger
	mu    sync.Mutex
	nodes map[string]*nodeState
	// consoles are the running consoles by node UUID (console.go).
	consoles map[string]*fakeConsole
}

type nodeState struct {
	power    plugins.PowerState
	boot     plugins.BootDeviceSetting
	prepared bool
	deployed bool
	cleaned  []string
	// volumes are the node's logical disks (the raid interface).
	volumes []plugins.LogicalDisk
	// management interface version 2 (management2.go)
	bootMode   plugins.BootMode
	secureBoot bool
	indicators map[string]plugins.IndicatorState // by "name@component"
	media      map[plugins.VirtualMediaDevice]string
	bios       map[string]string // nil: the defaults (bios.go)
	firmware   map[string]string // nil: the defaults (bios.go)
}

// New returns a fake driver logging to log (nil: discard).
func New(log *slog.Logger) *Driver {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Driver{log: log, nodes: map[string]*nodeState{}}
}

// Describe implements plugins.Driver.
func (d *Driver) Describe() plugins.Description {
	return plugins.Description{Name: "fake", Version: Version, HardwareTypes: []string{HardwareType}}
}

// state returns node's state, creating it; the caller holds d.mu.
func (d *Driver) state(node plugins.Node) (*nodeState, error) {
	if node.UUID == "" {
		return nil, errors.New("node has no UUID")
	}
	s, ok := d.nodes[node.UUID]
	if !ok {
		s = newState()
		d.nodes[node.UUID] = s
	}
	return s, nil
}

// newState is the state of a node nothing has changed yet.
func newState() *nodeState {
	return &nodeState{power: plugins.PowerOff, boot: plugins.BootDeviceSetting{Device: plugins.BootPXE}}
}

// read runs fn on node's state, or on a node's first state without
// keeping it: power sync reads every node's power state every cycle, and
// a node nothing has changed should cost the fake no memory (with 100,000
// nodes, their states were most of the plugin's).
func (d *Driver) read(node plugins.Node, op string, fn func(*nodeState)) error {
	if node.UUID == "" {
		return fmt.Errorf("driver fake: node %s: %s: %w", node.UUID, op, errors.New("node has no UUID"))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	s, ok := d.nodes[node.UUID]
	if !ok {
		s = newState()
	}
	fn(s)
	return nil
}

// with runs fn on node's state under the lock and names the driver in errors.
func (d *Driver) with(node plugins.Node, op string, fn func(*nodeState) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, err := d.state(node)
	if err == nil {
		err = fn(s)
	}
	if err != nil {
		return fmt.Errorf("driver fake: node %s: %s: %w", node.UUID, op, err)
	}
	return nil
}

var supported = []plugins.BootDevice{plugins.BootPXE, plugins.BootDisk, plugins.BootCDROM, plugins.BootBIOS}

// GetBootDevice implements plugins.BootDeviceGetter.
func (d *Driver) GetBootDevice(_ context.Context, node plugins.Node) (plugins.BootDeviceSetting, error) {
	var b plugins.BootDeviceSetting
	err := d.with(node, "get boot device", func(s *nodeState) error { b = s.boot; return nil })
	return b, err
}

// SetBootDevice implements plugins.BootDeviceSetter.
func (d *Driver) SetBootDevice(_ context.Context, node plugins.Node, setting plugins.BootDeviceSetting) error {
	return d.with(node, "set boot device", func(s *nodeState) error {
		if !slices.Contains(supported, setting.Device) {
			return fmt.Errorf("device %q: %w", setting.Device, plugins.ErrNotSupported)
		}
		s.boot = setting
		return nil
	})
}

// SupportedBootDevices implements plugins.SupportedBootDevicesLister.
func (d *Driver) SupportedBootDevices(context.Context, plugins.Node) ([]plugins.BootDevice, error) {
	return slices.Clone(supported), nil
}

// InjectNMI implements plugins.NMIInjector; it only checks the node exists.
func (d *Driver) InjectNMI(_ context.Context, node plugins.Node) error {
	return d.with(node, "inject NMI", func(*nodeState) error { return nil })
}

// PrepareDeploy implements plugins.DeployPreparer.
func (d *Driver) PrepareDeploy(_ context.Context, node plugins.Node) error {
	return d.with(node, "prepare deploy", func(s *nodeState) error { s.prepared = true; return nil })
}

// DeployDelayKey is the driver_info key (seconds) that makes Deploy take
// that long, so tests can act in the middle of a deploy.
const DeployDelayKey = "fake_deploy_delay"

// Deploy implements plugins.Deployer: the node is active and powered on,
// after driver_info fake_deploy_delay seconds if set (ctx cuts it short).
func (d *Driver) Deploy(ctx context.Context, node plugins.Node) error {
	if secs, err := strconv.ParseFloat(fmt.Sprint(node.DriverInfo[DeployDelayKey]), 64); err == nil && secs > 0 {
		select {
		case <-time.After(time.Duration(secs * float64(time.Second))):
		case <-ctx.Done():
			return fmt.Errorf("driver fake: node %s: deploy: %w", node.UUID, ctx.Err())
		}
	}
	return d.with(node, "deploy", func(s *nodeState) error {
		s.deployed, s.power = true, plugins.PowerOn
		s.boot = plugins.BootDeviceSetting{Device: plugins.BootDisk, Persistent: true, Mode: s.boot.Mode}
		return nil
	})
}

// TearDown implements plugins.DeployTearDowner.
func (d *Driver) TearDown(_ context.Context, node plugins.Node) error {
	return d.with(node, "tear down", func(s *nodeState) error {
		s.deployed, s.prepared, s.power = false, false, plugins.PowerOff
		return nil
	})
}

var cleanSteps = []plugins.CleanStep{
	{Interface: plugins.InterfaceDeploy, Step: "erase_devices_metadata", Priority: 99, Abortable: true},
	{Interface: plugins.InterfaceDeploy, Step: "erase_devices", Priority: 10, Abortable: true},
	// An out-of-band step (manual cleaning only, as a BMC reset is): it
	// runs without the agent, so with disable_ramdisk too (API 1.70).
	{Interface: plugins.InterfaceManagement, Step: "reset_bmc", Priority: 0},
}

// Cleaned lists the clean steps the driver ran on the node, in order,
// and whether its deploy ramdisk was booted (Deploy) since it was last
// torn down: what a test checks.
func (d *Driver) Cleaned(uuid string) (steps []string, deployed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.nodes[uuid]; ok {
		return slices.Clone(s.cleaned), s.deployed
	}
	return nil, false
}

// ListCleanSteps implements plugins.CleanStepLister.
func (d *Driver) ListCleanSteps(context.Context, plugins.Node) ([]plugins.CleanStep, error) {
	return slices.Clone(cleanSteps), nil
}

// ExecuteCleanStep implements plugins.CleanStepExecutor.
func (d *Driver) ExecuteCleanStep(_ context.Context, node plugins.Node, step plugins.CleanStep) error {
	return d.with(node, "execute clean step "+step.Step, func(s *nodeState) error {
		if !slices.ContainsFunc(cleanSteps, func(c plugins.CleanStep) bool { return c.Step == step.Step }) {
			return plugins.ErrNotSupported
		}
		s.cleaned = append(s.cleaned, step.Step)
		return nil
	})
}

// Inspect implements plugins.Inspector with a fixed inventory and a MAC
// address derived from the node UUID, so it is stable across runs.
func (d *Driver) Inspect(_ context.Context, node plugins.Node) (plugins.Inventory, error) {
	var inv plugins.Inventory
	err := d.with(node, "inspect", func(*nodeState) error {
		h := md5.Sum([]byte(node.UUID))
		mac := fmt.Sprintf("52:54:00:%02x:%02x:%02x", h[0], h[1], h[2])
		inv = plugins.Inventory{CPUs: 4, CPUArch: "x86_64", MemoryMB: 8192, LocalGB: 40,
			NICs: []plugins.NIC{{Name: "eth0", MACAddress: mac}}}
		return nil
	})
	return inv, err
}
