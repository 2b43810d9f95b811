package host

import (
	"context"
	"fmt"
	"time"

	"github.com/rivetmetal/rivet/plugins"
)

// Driver is the conductor's handle on the plugin serving one hardware type.
// Its methods mirror the SDK's capability interfaces; each checks that the
// interface was negotiated and the capability advertised (otherwise
// plugins.ErrNotSupported without a round trip) and names the driver in its
// errors. Safe for concurrent use.
type Driver struct {
	sup          *supervisor
	hardwareType string
}

// Registration returns what was negotiated with the running plugin.
func (d *Driver) Registration() (Registration, bool) { return d.sup.registration() }

// call runs fn on a running instance after checking the interface and
// capability; it is the one path every Driver method takes.
func call[T any](ctx context.Context, d *Driver, iface plugins.Interface, capability plugins.Capability, op string,
	fn func(c *Client) (T, error)) (T, error) {
	return callChecked(ctx, d, iface, op, func(reg Registration) error {
		if capability != "" && !reg.Has(capability) {
			return fmt.Errorf("capability %s not advertised: %w", capability, plugins.ErrNotSupported)
		}
		return nil
	}, fn)
}

// callChecked is call with check run against the registration of the
// instance the call goes to, before anything is sent. An empty iface is a
// call that belongs to no interface (sensors): only check applies.
func callChecked[T any](ctx context.Context, d *Driver, iface plugins.Interface, op string,
	check func(Registration) error, fn func(c *Client) (T, error)) (T, error) {
	var zero T
	inst, err := d.sup.acquire(ctx)
	if err != nil {
		return zero, err
	}
	if _, ok := inst.reg.Interfaces[iface]; iface != "" && !ok {
		inst.inflight.Done()
		return zero, fmt.Errorf("driver %s: %s: interface %s not negotiated: %w", d.sup.src.Driver, op, iface, plugins.ErrNotSupported)
	}
	if err := check(inst.reg); err != nil {
		inst.inflight.Done()
		return zero, fmt.Errorf("driver %s: %s: %w", d.sup.src.Driver, op, err)
	}
	start := time.Now()
	v, err := fn(inst.driver)
	if o := d.sup.cfg.Observer; o != nil {
		o.DriverCall(d.hardwareType, op, time.Since(start), err)
	}
	if err = d.sup.release(inst, op, err); err != nil {
		if _, crashed := err.(*PluginCrashedError); crashed {
			return zero, err
		}
		return zero, fmt.Errorf("driver %s: %s: %w", d.sup.src.Driver, op, err)
	}
	return v, nil
}

func (d *Driver) node(n plugins.Node) plugins.Node {
	if n.HardwareType == "" {
		n.HardwareType = d.hardwareType
	}
	return n
}

type none struct{}

func noValue(err error) (none, error) { return none{}, err }

// GetPowerState reads the node's power state.
func (d *Driver) GetPowerState(ctx context.Context, n plugins.Node) (plugins.PowerState, error) {
	return call(ctx, d, plugins.InterfacePower, "", "get power state", func(c *Client) (plugins.PowerState, error) {
		return c.GetPowerState(ctx, d.node(n))
	})
}

// SetPowerState powers the node on or off.
func (d *Driver) SetPowerState(ctx context.Context, n plugins.Node, target plugins.PowerState) error {
	_, err := call(ctx, d, plugins.InterfacePower, "", "set power state", func(c *Client) (none, error) {
		return noValue(c.SetPowerState(ctx, d.node(n), target))
	})
	return err
}

// Reboot hard-resets the node.
func (d *Driver) Reboot(ctx context.Context, n plugins.Node) error {
	_, err := call(ctx, d, plugins.InterfacePower, "", "reboot", func(c *Client) (none, error) {
		return noValue(c.Reboot(ctx, d.node(n)))
	})
	return err
}

// GetBootDevice reads the boot device override.
func (d *Driver) GetBootDevice(ctx context.Context, n plugins.Node) (plugins.BootDeviceSetting, error) {
	return call(ctx, d, plugins.InterfaceManagement, "", "get boot device", func(c *Client) (plugins.BootDeviceSetting, error) {
		return c.GetBootDevice(ctx, d.node(n))
	})
}

// SetBootDevice sets the boot device override.
func (d *Driver) SetBootDevice(ctx context.Context, n plugins.Node, s plugins.BootDeviceSetting) error {
	_, err := call(ctx, d, plugins.InterfaceManagement, "", "set boot device", func(c *Client) (none, error) {
		return noValue(c.SetBootDevice(ctx, d.node(n), s))
	})
	return err
}

// SupportedBootDevices lists the boot devices the node accepts.
func (d *Driver) SupportedBootDevices(ctx context.Context, n plugins.Node) ([]plugins.BootDevice, error) {
	return call(ctx, d, plugins.InterfaceManagement, "", "supported boot devices", func(c *Client) ([]plugins.BootDevice, error) {
		return c.SupportedBootDevices(ctx, d.node(n))
	})
}

// InjectNMI sends an NMI; ErrNotSupported unless the plugin advertised nmi.
func (d *Driver) InjectNMI(ctx context.Context, n plugins.Node) error {
	_, err := call(ctx, d, plugins.InterfaceManagement, plugins.CapabilityNMI, "inject NMI", func(c *Client) (none, error) {
		return noValue(c.InjectNMI(ctx, d.node(n)))
	})
	return err
}

// PrepareDeploy prepares the node for deployment.
func (d *Driver) PrepareDeploy(ctx context.Context, n plugins.Node) error {
	_, err := call(ctx, d, plugins.InterfaceDeploy, "", "prepare deploy", func(c *Client) (none, error) {
		return noValue(c.PrepareDeploy(ctx, d.node(n)))
	})
	return err
}

// Deploy deploys the node.
func (d *Driver) Deploy(ctx context.Context, n plugins.Node) error {
	_, err := call(ctx, d, plugins.InterfaceDeploy, "", "deploy", func(c *Client) (none, error) {
		return noValue(c.Deploy(ctx, d.node(n)))
	})
	return err
}

// TearDown undeploys the node.
func (d *Driver) TearDown(ctx context.Context, n plugins.Node) error {
	_, err := call(ctx, d, plugins.InterfaceDeploy, "", "tear down", func(c *Client) (none, error) {
		return noValue(c.TearDown(ctx, d.node(n)))
	})
	return err
}

// ListCleanSteps lists clean steps; ErrNotSupported unless advertised.
func (d *Driver) ListCleanSteps(ctx context.Context, n plugins.Node) ([]plugins.CleanStep, error) {
	return call(ctx, d, plugins.InterfaceDeploy, plugins.CapabilityCleanSteps, "list clean steps", func(c *Client) ([]plugins.CleanStep, error) {
		return c.ListCleanSteps(ctx, d.node(n))
	})
}

// ExecuteCleanStep runs one clean step; ErrNotSupported unless advertised.
func (d *Driver) ExecuteCleanStep(ctx context.Context, n plugins.Node, step plugins.CleanStep) error {
	_, err := call(ctx, d, plugins.InterfaceDeploy, plugins.CapabilityCleanSteps, "execute clean step", func(c *Client) (none, error) {
		return noValue(c.ExecuteCleanStep(ctx, d.node(n), step))
	})
	return err
}

// Inspect reads the node's hardware inventory.
func (d *Driver) Inspect(ctx context.Context, n plugins.Node) (plugins.Inventory, error) {
	return call(ctx, d, plugins.InterfaceInspect, "", "inspect", func(c *Client) (plugins.Inventory, error) {
		return c.Inspect(ctx, d.node(n))
	})
}

// StartConsole starts the node's console (console interface version 1);
// ErrNotSupported when the plugin did not negotiate the console interface.
func (d *Driver) StartConsole(ctx context.Context, n plugins.Node, ep plugins.ConsoleEndpoint) (plugins.ConsoleInfo, error) {
	return call(ctx, d, plugins.InterfaceConsole, "", "start console", func(c *Client) (plugins.ConsoleInfo, error) {
		return c.StartConsole(ctx, d.node(n), ep)
	})
}

// StopConsole stops the node's console.
func (d *Driver) StopConsole(ctx context.Context, n plugins.Node) error {
	_, err := call(ctx, d, plugins.InterfaceConsole, "", "stop console", func(c *Client) (none, error) {
		return noValue(c.StopConsole(ctx, d.node(n)))
	})
	return err
}
