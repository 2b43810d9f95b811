package plugins

import (
	"context"

	"google.golang.org/grpc"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
)

// Client is the host's view of a plugin reached over gRPC: it implements
// every capability interface and turns the wire back into the SDK's types
// and errors. A method the plugin does not serve returns ErrNotSupported.
// The host (plugins/host) and plugintest obtain one from GRPCPlugin; a
// driver author never needs it.
type Client struct {
	rpc driverv1.DriverClient
}

var _ interface {
	PowerInterface
	ManagementInterface
	NMIInjector
	DeployInterface
	CleanStepLister
	CleanStepExecutor
	Inspector
} = (*Client)(nil)

// Info asks the plugin what it serves.
func (c *Client) Info(ctx context.Context) (Info, error) {
	resp, err := c.rpc.Info(ctx, &driverv1.InfoRequest{})
	if err != nil {
		return Info{}, fromStatus(err)
	}
	return infoFromProto(resp), nil
}

// Configure tells the plugin what the host negotiated.
func (c *Client) Configure(ctx context.Context, n Negotiation) error {
	_, err := c.rpc.Configure(ctx, negotiationToProto(n))
	return fromStatus(err)
}

// GetPowerState implements PowerStateGetter.
func (c *Client) GetPowerState(ctx context.Context, node Node) (PowerState, error) {
	req, err := nodeRequest(node)
	if err != nil {
		return "", err
	}
	resp, err := c.rpc.GetPowerState(ctx, req)
	if err != nil {
		return "", fromStatus(err)
	}
	return ParsePowerState(resp.GetPowerState())
}

// SetPowerState implements PowerSetter.
func (c *Client) SetPowerState(ctx context.Context, node Node, target PowerState) error {
	n, err := nodeToProto(node)
	if err != nil {
		return err
	}
	_, err = c.rpc.SetPowerState(ctx, &driverv1.SetPowerStateRequest{Node: n, PowerState: string(target)})
	return fromStatus(err)
}

// Reboot implements Rebooter.
func (c *Client) Reboot(ctx context.Context, node Node) error {
	return c.nodeCall(ctx, node, c.rpc.Reboot)
}

// GetBootDevice implements BootDeviceGetter.
func (c *Client) GetBootDevice(ctx context.Context, node Node) (BootDeviceSetting, error) {
	req, err := nodeRequest(node)
	if err != nil {
		return BootDeviceSetting{}, err
	}
	resp, err := c.rpc.GetBootDevice(ctx, req)
	if err != nil {
		return BootDeviceSetting{}, fromStatus(err)
	}
	dev, err := ParseBootDevice(resp.GetDevice())
	if err != nil {
		return BootDeviceSetting{}, err
	}
	mode, err := ParseBootMode(resp.GetBootMode())
	if err != nil {
		return BootDeviceSetting{}, err
	}
	return BootDeviceSetting{Device: dev, Persistent: resp.GetPersistent(), Mode: mode}, nil
}

// SetBootDevice implements BootDeviceSetter.
func (c *Client) SetBootDevice(ctx context.Context, node Node, s BootDeviceSetting) error {
	n, err := nodeToProto(node)
	if err != nil {
		return err
	}
	_, err = c.rpc.SetBootDevice(ctx, &driverv1.SetBootDeviceRequest{Node: n, Device: string(s.Device), Persistent: s.Persistent, BootMode: string(s.Mode)})
	return fromStatus(err)
}

// SupportedBootDevices implements SupportedBootDevicesLister.
func (c *Client) SupportedBootDevices(ctx context.Context, node Node) ([]BootDevice, error) {
	req, err := nodeRequest(node)
	if err != nil {
		return nil, err
	}
	resp, err := c.rpc.SupportedBootDevices(ctx, req)
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]BootDevice, 0, len(resp.GetDevices()))
	for _, d := range resp.GetDevices() {
		dev, err := ParseBootDevice(d)
		if err != nil {
			continue // a device a newer plugin knows and this host does not
		}
		out = append(out, dev)
	}
	return out, nil
}

// InjectNMI implements NMIInjector.
func (c *Client) InjectNMI(ctx context.Context, node Node) error {
	return c.nodeCall(ctx, node, c.rpc.InjectNMI)
}

// PrepareDeploy implements DeployPreparer.
func (c *Client) PrepareDeploy(ctx context.Context, node Node) error {
	return c.nodeCall(ctx, node, c.rpc.PrepareDeploy)
}

// Deploy implements Deployer.
func (c *Client) Deploy(ctx context.Context, node Node) error {
	return c.nodeCall(ctx, node, c.rpc.Deploy)
}

// TearDown implements DeployTearDowner.
func (c *Client) TearDown(ctx context.Context, node Node) error {
	return c.nodeCall(ctx, node, c.rpc.TearDown)
}

// ListCleanSteps implements CleanStepLister.
func (c *Client) ListCleanSteps(ctx context.Context, node Node) ([]CleanStep, error) {
	req, err := nodeRequest(node)
	if err != nil {
		return nil, err
	}
	resp, err := c.rpc.ListCleanSteps(ctx, req)
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]CleanStep, 0, len(resp.GetSteps()))
	for _, s := range resp.GetSteps() {
		out = append(out, cleanStepFromProto(s))
	}
	return out, nil
}

// ExecuteCleanStep implements CleanStepExecutor.
func (c *Client) ExecuteCleanStep(ctx context.Context, node Node, step CleanStep) error {
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

// Inspect implements Inspector.
func (c *Client) Inspect(ctx context.Context, node Node) (Inventory, error) {
	req, err := nodeRequest(node)
	if err != nil {
		return Inventory{}, err
	}
	resp, err := c.rpc.Inspect(ctx, req)
	if err != nil {
		return Inventory{}, fromStatus(err)
	}
	return inventoryFromProto(resp), nil
}

func (c *Client) nodeCall(ctx context.Context, node Node, rpc func(context.Context, *driverv1.NodeRequest, ...grpc.CallOption) (*driverv1.Empty, error)) error {
	req, err := nodeRequest(node)
	if err != nil {
		return err
	}
	_, err = rpc(ctx, req)
	return fromStatus(err)
}

func nodeRequest(node Node) (*driverv1.NodeRequest, error) {
	n, err := nodeToProto(node)
	if err != nil {
		return nil, err
	}
	return &driverv1.NodeRequest{Node: n}, nil
}
