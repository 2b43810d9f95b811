package host

import (
	"context"
	"fmt"
	"time"

	"github.com/rivetmetal/rivet/plugins"
)

var _ PowerActor = (*Driver)(nil)

// CheckPowerAction implements PowerActor from what was negotiated
// with the running plugin: soft power needs power interface version 2
// (protocol 2) and capability soft_power, a timeout needs power interface
// version 2. A plugin between a crash and its restart is not judged here;
// PowerAction checks again against the process it reaches.
func (d *Driver) CheckPowerAction(target plugins.PowerState, timeout time.Duration) error {
	reg, ok := d.Registration()
	if !ok {
		return nil
	}
	if _, ok := reg.Interfaces[plugins.InterfacePower]; !ok {
		return fmt.Errorf("driver %s: interface power not negotiated: %w", d.sup.src.Driver, plugins.ErrNotSupported)
	}
	return powerSupport(reg, target, timeout)
}

// PowerAction implements PowerActor: with power interface version 2
// every action goes to the plugin's Power service (protocol 2); with
// version 1 a hard action without a timeout goes to SetPowerState or
// Reboot, and anything else answers ErrNotSupported without a round trip.
func (d *Driver) PowerAction(ctx context.Context, n plugins.Node, target plugins.PowerState, timeout time.Duration) error {
	_, err := callChecked(ctx, d, plugins.InterfacePower, string(target), func(reg Registration) error {
		return powerSupport(reg, target, timeout)
	}, func(c *Client) (none, error) {
		return noValue(c.PowerAction(ctx, d.node(n), target, timeout))
	})
	return err
}

// powerSupport says whether the plugin of reg can perform target with
// timeout; its error names the plugin and what was negotiated with it.
func powerSupport(reg Registration, target plugins.PowerState, timeout time.Duration) error {
	if target.Final() == "" {
		return fmt.Errorf("power action %q: %w", target, plugins.ErrNotSupported)
	}
	pv := reg.Interfaces[plugins.InterfacePower]
	plugin := fmt.Sprintf("driver plugin %q (version %s) negotiated plugin protocol %d and power interface version %d",
		reg.PluginName, reg.PluginVersion, reg.Protocol, pv)
	switch {
	case (target.Soft() || timeout > 0) && pv < 2:
		need := "soft power"
		if !target.Soft() {
			need = "a power timeout"
		}
		return fmt.Errorf("its %s; %s needs plugin protocol %d with power interface version 2: %w",
			plugin, need, plugins.InterfaceProtocol(plugins.InterfacePower, 2), plugins.ErrNotSupported)
	case target.Soft() && !reg.Has(plugins.CapabilitySoftPower):
		return fmt.Errorf("its %s but does not advertise capability %s: %w", plugin, plugins.CapabilitySoftPower, plugins.ErrNotSupported)
	}
	return nil
}
