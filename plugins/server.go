package plugins

import (
	"context"
	"fmt"
	"slices"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
)

// server adapts a Driver to the generated gRPC service (plugin side).
// Every error leaves through toStatus.
type server struct {
	driverv1.UnimplementedDriverServer
	driver   Driver
	info     Info
	protocol int // the protocol major this connection serves
}

func newServer(d Driver, info Info, protocol int) *server {
	return &server{driver: d, info: info, protocol: protocol}
}

// capability returns the driver as T, or ErrNotSupported naming the method.
func capability[T any](s *server, method string) (T, error) {
	impl, ok := s.driver.(T)
	if !ok {
		return impl, fmt.Errorf("plugin %s: %s: %w", s.info.Name, method, ErrNotSupported)
	}
	return impl, nil
}

func (s *server) Info(context.Context, *driverv1.InfoRequest) (*driverv1.InfoResponse, error) {
	return infoToProto(s.info), nil
}

func (s *server) Configure(ctx context.Context, req *driverv1.ConfigureRequest) (*driverv1.ConfigureResponse, error) {
	n := negotiationFromProto(req)
	for iface, v := range n.Interfaces {
		if !slices.Contains(s.info.Interfaces[iface], v) || InterfaceProtocol(iface, v) > s.protocol {
			return nil, toStatus(fmt.Errorf("plugin %s: configure: interface %s version %d under protocol %d (served: %v): %w",
				s.info.Name, iface, v, s.protocol, s.info.Interfaces[iface], ErrNotSupported))
		}
	}
	if c, ok := s.driver.(Configurer); ok {
		if err := c.Configure(ctx, n); err != nil {
			return nil, toStatus(fmt.Errorf("plugin %s: configure: %w", s.info.Name, err))
		}
	}
	return &driverv1.ConfigureResponse{}, nil
}

func (s *server) GetPowerState(ctx context.Context, req *driverv1.NodeRequest) (*driverv1.PowerStateResponse, error) {
	d, err := capability[PowerStateGetter](s, "get power state")
	if err != nil {
		return nil, toStatus(err)
	}
	ps, err := d.GetPowerState(ctx, nodeFromProto(req.GetNode()))
	if err != nil {
		return nil, toStatus(err)
	}
	return &driverv1.PowerStateResponse{PowerState: string(ps)}, nil
}

func (s *server) SetPowerState(ctx context.Context, req *driverv1.SetPowerStateRequest) (*driverv1.Empty, error) {
	d, err := capability[PowerSetter](s, "set power state")
	if err != nil {
		return nil, toStatus(err)
	}
	target, err := ParsePowerState(req.GetPowerState())
	if err != nil || (target != PowerOn && target != PowerOff) {
		return nil, toStatus(fmt.Errorf("plugin %s: set power state %q: %w", s.info.Name, req.GetPowerState(), ErrNotSupported))
	}
	return empty(d.SetPowerState(ctx, nodeFromProto(req.GetNode()), target))
}

func (s *server) Reboot(ctx context.Context, req *driverv1.NodeRequest) (*driverv1.Empty, error) {
	d, err := capability[Rebooter](s, "reboot")
	if err != nil {
		return nil, toStatus(err)
	}
	return empty(d.Reboot(ctx, nodeFromProto(req.GetNode())))
}

func (s *server) GetBootDevice(ctx context.Context, req *driverv1.NodeRequest) (*driverv1.BootDeviceResponse, error) {
	d, err := capability[BootDeviceGetter](s, "get boot device")
	if err != nil {
		return nil, toStatus(err)
	}
	bd, err := d.GetBootDevice(ctx, nodeFromProto(req.GetNode()))
	if err != nil {
		return nil, toStatus(err)
	}
	return &driverv1.BootDeviceResponse{Device: string(bd.Device), Persistent: bd.Persistent, BootMode: string(bd.Mode)}, nil
}

func (s *server) SetBootDevice(ctx context.Context, req *driverv1.SetBootDeviceRequest) (*driverv1.Empty, error) {
	d, err := capability[BootDeviceSetter](s, "set boot device")
	if err != nil {
		return nil, toStatus(err)
	}
	dev, err := ParseBootDevice(req.GetDevice())
	if err != nil {
		return nil, toStatus(fmt.Errorf("plugin %s: set boot device: %v: %w", s.info.Name, err, ErrNotSupported))
	}
	mode, err := ParseBootMode(req.GetBootMode())
	if err != nil {
		return nil, toStatus(fmt.Errorf("plugin %s: set boot device: %v: %w", s.info.Name, err, ErrNotSupported))
	}
	return empty(d.SetBootDevice(ctx, nodeFromProto(req.GetNode()), BootDeviceSetting{Device: dev, Persistent: req.GetPersistent(), Mode: mode}))
}

func (s *server) SupportedBootDevices(ctx context.Context, req *driverv1.NodeRequest) (*driverv1.SupportedBootDevicesResponse, error) {
	d, err := capability[SupportedBootDevicesLister](s, "supported boot devices")
	if err != nil {
		return nil, toStatus(err)
	}
	devs, err := d.SupportedBootDevices(ctx, nodeFromProto(req.GetNode()))
	if err != nil {
		return nil, toStatus(err)
	}
	out := &driverv1.SupportedBootDevicesResponse{}
	for _, dev := range devs {
		out.Devices = append(out.Devices, string(dev))
	}
	return out, nil
}

func (s *server) InjectNMI(ctx context.Context, req *driverv1.NodeRequest) (*driverv1.Empty, error) {
	d, err := capability[NMIInjector](s, "inject NMI")
	if err != nil {
		return nil, toStatus(err)
	}
	return empty(d.InjectNMI(ctx, nodeFromProto(req.GetNode())))
}

func (s *server) PrepareDeploy(ctx context.Context, req *driverv1.NodeRequest) (*driverv1.Empty, error) {
	d, err := capability[DeployPreparer](s, "prepare deploy")
	if err != nil {
		return nil, toStatus(err)
	}
	return empty(d.PrepareDeploy(ctx, nodeFromProto(req.GetNode())))
}

func (s *server) Deploy(ctx context.Context, req *driverv1.NodeRequest) (*driverv1.Empty, error) {
	d, err := capability[Deployer](s, "deploy")
	if err != nil {
		return nil, toStatus(err)
	}
	return empty(d.Deploy(ctx, nodeFromProto(req.GetNode())))
}

func (s *server) TearDown(ctx context.Context, req *driverv1.NodeRequest) (*driverv1.Empty, error) {
	d, err := capability[DeployTearDowner](s, "tear down")
	if err != nil {
		return nil, toStatus(err)
	}
	return empty(d.TearDown(ctx, nodeFromProto(req.GetNode())))
}

func (s *server) ListCleanSteps(ctx context.Context, req *driverv1.NodeRequest) (*driverv1.CleanStepsResponse, error) {
	d, err := capability[CleanStepLister](s, "list clean steps")
	if err != nil {
		return nil, toStatus(err)
	}
	steps, err := d.ListCleanSteps(ctx, nodeFromProto(req.GetNode()))
	if err != nil {
		return nil, toStatus(err)
	}
	out := &driverv1.CleanStepsResponse{}
	for _, st := range steps {
		p, err := cleanStepToProto(st)
		if err != nil {
			return nil, toStatus(fmt.Errorf("plugin %s: list clean steps: %w", s.info.Name, err))
		}
		out.Steps = append(out.Steps, p)
	}
	return out, nil
}

func (s *server) ExecuteCleanStep(ctx context.Context, req *driverv1.ExecuteCleanStepRequest) (*driverv1.Empty, error) {
	d, err := capability[CleanStepExecutor](s, "execute clean step")
	if err != nil {
		return nil, toStatus(err)
	}
	return empty(d.ExecuteCleanStep(ctx, nodeFromProto(req.GetNode()), cleanStepFromProto(req.GetStep())))
}

func (s *server) Inspect(ctx context.Context, req *driverv1.NodeRequest) (*driverv1.InspectResponse, error) {
	d, err := capability[Inspector](s, "inspect")
	if err != nil {
		return nil, toStatus(err)
	}
	inv, err := d.Inspect(ctx, nodeFromProto(req.GetNode()))
	if err != nil {
		return nil, toStatus(err)
	}
	return inventoryToProto(inv), nil
}

func empty(err error) (*driverv1.Empty, error) {
	if err != nil {
		return nil, toStatus(err)
	}
	return &driverv1.Empty{}, nil
}
