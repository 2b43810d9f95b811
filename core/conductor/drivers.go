package conductor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/host"
	"github.com/rivetmetal/rivet/plugins/redact"
)

// Hardware is what the conductor calls on the driver serving one hardware
// type. *host.Driver (a plugin) implements it, and so do in-process drivers
// such as drivers/fake in tests.
type Hardware interface {
	plugins.PowerInterface
	plugins.ManagementInterface
	plugins.DeployInterface
	plugins.Inspector
	plugins.CleanStepLister
	plugins.CleanStepExecutor
}

// DriverSet gives the conductor its drivers by hardware type.
type DriverSet interface {
	// Hardware returns the driver of a hardware type, or an error wrapping
	// host.ErrUnknownHardwareType.
	Hardware(hw string) (Hardware, error)
	// HardwareTypes lists the hardware types served, sorted.
	HardwareTypes() []string
	// Interfaces lists the interfaces negotiated for a hardware type.
	Interfaces(hw string) []plugins.Interface
	// Plugins describes what was negotiated with each plugin, for the
	// conductor_plugins rows.
	Plugins() []db.ConductorPlugin
}

// PluginDrivers serves the hardware types of a plugin host.Manager that
// are also in Enabled ([conductor] enabled_hardware_types).
type PluginDrivers struct {
	Manager *host.Manager
	Enabled []string
}

// Hardware implements DriverSet.
func (p PluginDrivers) Hardware(hw string) (Hardware, error) {
	if !slices.Contains(p.Enabled, hw) {
		return nil, fmt.Errorf("hardware type %q is not enabled: %w", hw, host.ErrUnknownHardwareType)
	}
	d, err := p.Manager.Driver(hw)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// HardwareTypes implements DriverSet.
func (p PluginDrivers) HardwareTypes() []string {
	var out []string
	for hw := range p.Manager.ByHardwareType() {
		if slices.Contains(p.Enabled, hw) {
			out = append(out, hw)
		}
	}
	slices.Sort(out)
	return out
}

// Interfaces implements DriverSet.
func (p PluginDrivers) Interfaces(hw string) []plugins.Interface {
	reg, ok := p.Manager.ByHardwareType()[hw]
	if !ok {
		return nil
	}
	return slices.Sorted(maps.Keys(reg.Interfaces))
}

// Plugins implements DriverSet: one "ok" row per enabled hardware type and
// one "refused" row per refused plugin.
func (p PluginDrivers) Plugins() []db.ConductorPlugin {
	var out []db.ConductorPlugin
	byHW := p.Manager.ByHardwareType()
	for _, hw := range slices.Sorted(maps.Keys(byHW)) {
		if !slices.Contains(p.Enabled, hw) {
			continue
		}
		r := byHW[hw]
		ifaces := db.JSONObject{}
		for i, v := range r.Interfaces {
			ifaces[string(i)] = v
		}
		caps := make(db.JSONStrings, len(r.Capabilities))
		for i, c := range r.Capabilities {
			caps[i] = string(c)
		}
		out = append(out, db.ConductorPlugin{HardwareType: hw, Driver: ptr(r.Driver), Status: ptr("ok"),
			PluginName: ptr(r.PluginName), PluginVersion: ptr(r.PluginVersion), Protocol: ptr(r.Protocol),
			Interfaces: ifaces, Capabilities: caps, Path: ptr(r.Path), BuiltIn: ptr(r.BuiltIn), Pinned: ptr(r.Pinned)})
	}
	refused := p.Manager.Refused()
	for _, name := range slices.Sorted(maps.Keys(refused)) {
		out = append(out, db.ConductorPlugin{Driver: ptr(name), Status: ptr("refused"), Error: ptr(refused[name].Error())})
	}
	return out
}

// StaticDrivers serves in-process drivers by hardware type, every interface
// negotiated (console when the driver implements plugins.ConsoleInterface):
// for tests and embedded use.
type StaticDrivers map[string]Hardware

// Hardware implements DriverSet.
func (s StaticDrivers) Hardware(hw string) (Hardware, error) {
	if d, ok := s[hw]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("hardware type %q: %w", hw, host.ErrUnknownHardwareType)
}

// HardwareTypes implements DriverSet.
func (s StaticDrivers) HardwareTypes() []string { return slices.Sorted(maps.Keys(s)) }

// Interfaces implements DriverSet.
func (s StaticDrivers) Interfaces(hw string) []plugins.Interface {
	d, ok := s[hw]
	if !ok {
		return nil
	}
	out := []plugins.Interface{plugins.InterfaceDeploy, plugins.InterfaceInspect, plugins.InterfaceManagement, plugins.InterfacePower}
	if _, raid := d.(plugins.RAIDInterface); raid {
		out = append(out, plugins.InterfaceRAID)
	}
	if _, ok := d.(plugins.BIOSInterface); ok {
		out = append(out, plugins.InterfaceBIOS)
	}
	if _, ok := d.(plugins.FirmwareInterface); ok {
		out = append(out, plugins.InterfaceFirmware)
	}
	if _, console := d.(plugins.ConsoleInterface); console {
		out = append([]plugins.Interface{plugins.InterfaceConsole}, out...)
	}
	return out
}

// Plugins implements DriverSet.
func (s StaticDrivers) Plugins() []db.ConductorPlugin {
	var out []db.ConductorPlugin
	for _, hw := range s.HardwareTypes() {
		out = append(out, db.ConductorPlugin{HardwareType: hw, Driver: ptr("in-process"), Status: ptr("ok"), BuiltIn: ptr(true)})
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// pluginNode is what a driver call gets of a node.
func pluginNode(n *objects.Node) plugins.Node {
	name := ""
	if n.Name != nil {
		name = *n.Name
	}
	return plugins.Node{UUID: n.UUID, Name: name, HardwareType: n.Driver,
		DriverInfo: plugins.DriverInfo(n.DriverInfo), InstanceInfo: instanceInfoWithBootMode(n)}
}

// bmcOf names a node's BMC for messages and the power-sync per-BMC key:
// its address (and port), never credentials: an address written with
// userinfo (https://user:pw@bmc) is masked.
func bmcOf(n *objects.Node) string { return bmcOfInfo(n.DriverInfo) }

// bmcOfInfo is bmcOf from a node's driver_info.
func bmcOfInfo(info map[string]any) string { return redact.Text(bmcAddress(info)) }

// bmcAddress is bmcOfInfo before masking.
func bmcAddress(info map[string]any) string {
	str := func(k string) string {
		if v, ok := info[k]; ok && v != nil {
			return strings.TrimSpace(fmt.Sprint(v))
		}
		return ""
	}
	if a := str("redfish_address"); a != "" {
		if id := str("redfish_system_id"); id != "" {
			return a + " " + id
		}
		return a
	}
	if a := str("ipmi_address"); a != "" {
		if p := str("ipmi_port"); p != "" {
			return a + ":" + p
		}
		return a
	}
	return ""
}

// hardware returns the driver of n's hardware type as a classed error.
func (s *Service) hardware(n *objects.Node) (Hardware, error) {
	d, err := s.drivers.Hardware(n.Driver)
	if errors.Is(err, host.ErrUnknownHardwareType) {
		return nil, errDriverNotFound(n.Driver)
	}
	return d, err
}

// driverCall runs one synchronous driver operation within
// Config.DriverCallTimeout, so a hung plugin or BMC cannot hold a worker
// and the node's lease forever, and names the driver, the BMC and the
// operation in its error.
func (s *Service) driverCall(ctx context.Context, n *objects.Node, op string, fn func(ctx context.Context, pn plugins.Node) error) error {
	return s.driverCallWithin(ctx, n, op, 0, fn)
}

// driverCallGrace is what a call that waits up to a caller's timeout gets
// beyond it, for the BMC commands around the wait.
const driverCallGrace = time.Minute

// driverCallWithin is driverCall for an operation that may itself wait up
// to wait (a power action's timeout): its bound is at least wait plus
// driverCallGrace, so Config.DriverCallTimeout never cuts a wait the
// caller asked for.
func (s *Service) driverCallWithin(ctx context.Context, n *objects.Node, op string, wait time.Duration, fn func(ctx context.Context, pn plugins.Node) error) error {
	ctx, cancel := s.driverContext(ctx, wait)
	defer cancel()
	if err := fn(ctx, pluginNode(n)); err != nil {
		return driverError(n.Driver, bmcOf(n), op, err)
	}
	return nil
}

// driverContext bounds one call into a driver by Config.DriverCallTimeout,
// or by wait plus driverCallGrace when that is longer.
func (s *Service) driverContext(ctx context.Context, wait time.Duration) (context.Context, context.CancelFunc) {
	if s.cfg.DriverCallTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	bound := s.cfg.DriverCallTimeout
	if wait > 0 {
		bound = max(bound, wait+driverCallGrace)
	}
	return context.WithTimeout(ctx, bound)
}
