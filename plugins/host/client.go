package host

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv2"
)

// Client is the host's view of a plugin reached over gRPC: it implements
// every capability interface and turns the wire back into the SDK's types
// and errors. A method the plugin does not serve returns
// plugins.ErrNotSupported. Driver (through its supervisor) and plugintest
// obtain one from GRPCPlugin.
type Client struct {
	rpc   driverv1.DriverClient
	power driverv2.PowerClient // nil below protocol 2
	raid  driverv2.RAIDClient  // nil below protocol 2
	// sensors is nil below protocol 2; called only when the plugin
	// advertised CapabilitySensors.
	sensors driverv2.SensorsClient
	// bios and firmware are the BIOS and Firmware services (nil below
	// protocol 2), called only when their interface was negotiated.
	bios     driverv2.BIOSClient
	firmware driverv2.FirmwareClient
	// console is the Console service (console interface version 1), nil
	// below protocol 2.
	console driverv2.ConsoleClient
	// validation is the Validation service, served under every protocol
	// major and called only for what the plugin advertised.
	validation driverv1.ValidationClient
	// mgmt2 is the Management2 service (management interface version 2),
	// called only once Configure settled on that version.
	mgmt2    driverv2.Management2Client
	protocol int
	// powerVersion is the power interface version sent with Configure
	// (0 before): version 1 keeps power actions on protocol 1's calls.
	powerVersion atomic.Int32
	// mgmtVersion is the management interface version sent with Configure
	// (0 before): below 2 the Management2 service is never called.
	mgmtVersion atomic.Int32
	// caps holds the capabilities of the last Info (nil before): soft
	// power needs capability soft_power as well as power version 2.
	caps atomic.Pointer[[]plugins.Capability]
}

var _ interface {
	plugins.PowerInterface
	PowerActor
	plugins.ManagementInterface
	plugins.NMIInjector
	plugins.DeployInterface
	plugins.CleanStepLister
	plugins.CleanStepExecutor
	plugins.Inspector
	plugins.ConsoleInterface
} = (*Client)(nil)

// Info asks the plugin what it serves.
func (c *Client) Info(ctx context.Context) (plugins.Info, error) {
	resp, err := c.rpc.Info(ctx, &driverv1.InfoRequest{})
	if err != nil {
		return plugins.Info{}, fromStatus(err)
	}
	info := infoFromProto(resp)
	c.caps.Store(&info.Capabilities)
	return info, nil
}

// Configure tells the plugin what the host negotiated.
func (c *Client) Configure(ctx context.Context, n plugins.Negotiation) error {
	_, err := c.rpc.Configure(ctx, negotiationToProto(n))
	if err == nil {
		c.powerVersion.Store(int32(n.Interfaces[plugins.InterfacePower]))
		c.mgmtVersion.Store(int32(n.Interfaces[plugins.InterfaceManagement]))
	}
	return fromStatus(err)
}

// GetPowerState implements plugins.PowerStateGetter.
func (c *Client) GetPowerState(ctx context.Context, node plugins.Node) (plugins.PowerState, error) {
	req, err := nodeRequest(node)
	if err != nil {
		return "", err
	}
	resp, err := c.rpc.GetPowerState(ctx, req)
	if err != nil {
		return "", fromStatus(err)
	}
	return plugins.ParsePowerState(resp.GetPowerState())
}

// SetPowerState implements plugins.PowerSetter.
func (c *Client) SetPowerState(ctx context.Context, node plugins.Node, target plugins.PowerState) error {
	n, err := nodeToProto(node)
	if err != nil {
		return err
	}
	_, err = c.rpc.SetPowerState(ctx, &driverv1.SetPowerStateRequest{Node: n, PowerState: string(target)})
	return fromStatus(err)
}

// Reboot implements plugins.Rebooter.
func (c *Client) Reboot(ctx context.Context, node plugins.Node) error {
	return c.nodeCall(ctx, node, c.rpc.Reboot)
}

// Protocol is the protocol major the client speaks with its plugin.
func (c *Client) Protocol() int { return c.protocol }

// powerV2 reports whether power actions use protocol 2's Power service:
// the protocol carries it and Configure did not settle on power 1.
func (c *Client) powerV2() bool {
	return c.power != nil && c.powerVersion.Load() != 1
}

// CheckPowerAction implements PowerActor from the protocol and the power
// interface version negotiated with Configure: soft power and timeouts need
// power interface version 2, which needs protocol 2. Whether the plugin
// advertised soft_power is checked against its last Info: a plugin serving
// power version 2 without SoftPowerOff and SoftReboot does not advertise it,
// and its soft actions are refused here, before anything is sent. Before
// any Info the plugin is left to say.
func (c *Client) CheckPowerAction(target plugins.PowerState, timeout time.Duration) error {
	if target.Final() == "" {
		return fmt.Errorf("power action %q: %w", target, plugins.ErrNotSupported)
	}
	if !c.powerV2() && (target.Soft() || timeout > 0) {
		return fmt.Errorf("%s: plugin protocol %d with power interface version %d has no soft power or power timeouts (power interface version 2, protocol 2): %w",
			describeAction(target, timeout), c.protocol, max(c.powerVersion.Load(), 1), plugins.ErrNotSupported)
	}
	if caps := c.caps.Load(); target.Soft() && caps != nil && !slices.Contains(*caps, plugins.CapabilitySoftPower) {
		return fmt.Errorf("%s: the plugin does not advertise capability %s: %w", target, plugins.CapabilitySoftPower, plugins.ErrNotSupported)
	}
	return nil
}

// PowerAction implements PowerActor: the Power service with power interface
// version 2; otherwise SetPowerState and Reboot, for what CheckPowerAction
// allows.
func (c *Client) PowerAction(ctx context.Context, node plugins.Node, target plugins.PowerState, timeout time.Duration) error {
	if err := c.CheckPowerAction(target, timeout); err != nil {
		return err
	}
	if !c.powerV2() {
		if target == plugins.Rebooting {
			return c.Reboot(ctx, node)
		}
		return c.SetPowerState(ctx, node, target)
	}
	n, err := nodeToProto(node)
	if err != nil {
		return err
	}
	req := &driverv2.PowerActionRequest{Node: n, Action: string(target)}
	if timeout > 0 {
		req.Timeout = durationpb.New(timeout)
	}
	_, err = c.power.PowerAction(ctx, req)
	return fromStatus(err)
}

// describeAction names a power action for messages: "soft power off",
// "power on with a timeout of 30s".
func describeAction(target plugins.PowerState, timeout time.Duration) string {
	if timeout > 0 {
		return fmt.Sprintf("%s with a timeout of %s", target, timeout)
	}
	return string(target)
}

// GetBootDevice implements plugins.BootDeviceGetter.
func (c *Client) GetBootDevice(ctx context.Context, node plugins.Node) (plugins.BootDeviceSetting, error) {
	req, err := nodeRequest(node)
	if err != nil {
		return plugins.BootDeviceSetting{}, err
	}
	resp, err := c.rpc.GetBootDevice(ctx, req)
	if err != nil {
		return plugins.BootDeviceSetting{}, fromStatus(err)
	}
	if resp.GetDevice() == "" { // unknown: no override in force
		return plugins.BootDeviceSetting{}, nil
	}
	dev, err := plugins.ParseBootDevice(resp.GetDevice())
	if err != nil {
		return plugins.BootDeviceSetting{}, err
	}
	mode, err := plugins.ParseBootMode(resp.GetBootMode())
	if err != nil {
		return plugins.BootDeviceSetting{}, err
	}
	return plugins.BootDeviceSetting{Device: dev, Persistent: resp.GetPersistent(), Mode: mode}, nil
}

// SetBootDevice implements plugins.BootDeviceSetter.
func (c *Client) SetBootDevice(ctx context.Context, node plugins.Node, s plugins.BootDeviceSetting) error {
	n, err := nodeToProto(node)
	if err != nil {
		return err
	}
	_, err = c.rpc.SetBootDevice(ctx, &driverv1.SetBootDeviceRequest{Node: n, Device: string(s.Device), Persistent: s.Persistent, BootMode: string(s.Mode)})
	return fromStatus(err)
}

// SupportedBootDevices implements plugins.SupportedBootDevicesLister.
func (c *Client) SupportedBootDevices(ctx context.Context, node plugins.Node) ([]plugins.BootDevice, error) {
	req, err := nodeRequest(node)
	if err != nil {
		return nil, err
	}
	resp, err := c.rpc.SupportedBootDevices(ctx, req)
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]plugins.BootDevice, 0, len(resp.GetDevices()))
	for _, d := range resp.GetDevices() {
		dev, err := plugins.ParseBootDevice(d)
		if err != nil {
			continue // a device a newer plugin knows and this host does not
		}
		out = append(out, dev)
	}
	return out, nil
}

// InjectNMI implements plugins.NMIInjector.
func (c *Client) InjectNMI(ctx context.Context, node plugins.Node) error {
	return c.nodeCall(ctx, node, c.rpc.InjectNMI)
}

// PrepareDeploy implements plugins.DeployPreparer.
func (c *Client) PrepareDeploy(ctx context.Context, node plugins.Node) error {
	return c.nodeCall(ctx, node, c.rpc.PrepareDeploy)
}

// Deploy implements plugins.Deployer.
func (c *Client) Deploy(ctx context.Context, node plugins.Node) error {
	return c.nodeCall(ctx, node, c.rpc.Deploy)
}

// TearDown implements plugins.DeployTearDowner.
func (c *Client) TearDown(ctx context.Context, node plugins.Node) error {
	return c.nodeCall(ctx, node, c.rpc.TearDown)
}

// ListCleanSteps implements plugins.CleanStepLister.
func (c *Client) ListCleanSteps(ctx context.Context, node plugins.Node) ([]plugins.CleanStep, error) {
	req, err := nodeRequest(node)
	if err != nil {
		return nil, err
	}
	resp, err := c.rpc.ListCleanSteps(ctx, req)
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]plugins.CleanStep, 0, len(resp.GetSteps()))
	for _, s := range resp.GetSteps() {
		out = append(out, cleanStepFromProto(s))
	}
	return out, nil
}

// ExecuteCleanStep implements plugins.CleanStepExecutor.
func (c *Client) ExecuteCleanStep(ctx context.Context, node plugins.Node, step plugins.CleanStep) error {
	n, err := nodeToProto(node)
	if err != nil {
		return err
	}
	s, err := cleanStepToProto(step)
	if err != nil {
		return err
	}
	_, err = c.rpc.ExecuteCleanStep(ctx, &driverv1.ExecuteCleanStepRequest{Node: n, Step: s})
	return fromStatus(err)
}

// Inspect implements plugins.Inspector.
func (c *Client) Inspect(ctx context.Context, node plugins.Node) (plugins.Inventory, error) {
	req, err := nodeRequest(node)
	if err != nil {
		return plugins.Inventory{}, err
	}
	resp, err := c.rpc.Inspect(ctx, req)
	if err != nil {
		return plugins.Inventory{}, fromStatus(err)
	}
	return inventoryFromProto(resp), nil
}

func (c *Client) nodeCall(ctx context.Context, node plugins.Node, rpc func(context.Context, *driverv1.NodeRequest, ...grpc.CallOption) (*driverv1.Empty, error)) error {
	req, err := nodeRequest(node)
	if err != nil {
		return err
	}
	_, err = rpc(ctx, req)
	return fromStatus(err)
}

func nodeRequest(node plugins.Node) (*driverv1.NodeRequest, error) {
	n, err := nodeToProto(node)
	if err != nil {
		return nil, err
	}
	return &driverv1.NodeRequest{Node: n}, nil
}

var _ interface {
	plugins.Validator
} = (*Client)(nil)

// Properties asks the plugin for the driver_info keys it declares;
// plugins.ErrNotSupported when it declares none (an older plugin).
func (c *Client) Properties(ctx context.Context) ([]plugins.Property, error) {
	if c.validation == nil {
		return nil, plugins.ErrNotSupported
	}
	resp, err := c.validation.Properties(ctx, &driverv1.Empty{})
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]plugins.Property, 0, len(resp.GetProperties()))
	for _, p := range resp.GetProperties() {
		out = append(out, plugins.Property{Name: p.GetName(), Required: p.GetRequired(), Description: p.GetDescription()})
	}
	return out, nil
}

// Validate implements plugins.Validator over the plugin's Validation service; a
// failure comes back as a *ValidationError. plugins.ErrNotSupported when the plugin
// has no Validate (an older plugin).
func (c *Client) Validate(ctx context.Context, node plugins.Node, iface plugins.Interface) error {
	if c.validation == nil {
		return plugins.ErrNotSupported
	}
	n, err := nodeToProto(node)
	if err != nil {
		return err
	}
	resp, err := c.validation.Validate(ctx, &driverv1.ValidateRequest{Node: n, Interface: string(iface)})
	if err != nil {
		return fromStatus(err)
	}
	return validationError(resp.GetProblem(), resp.GetReason(), resp.GetMissingKeys(), resp.GetInvalidKeys())
}
