package api

import (
	"context"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/rpc"
)

// Conductor is what the REST API asks of conductors: the methods of
// rpc.ConductorAPI it calls, so handler tests can use a hand-written fake.
// rpc.ConductorAPI implements it; its contract (leases, 202-style async work,
// classed errors) is the one documented there.
type Conductor interface {
	CreateNode(ctx context.Context, n *objects.Node) (*objects.Node, error)
	UpdateNode(ctx context.Context, n *objects.Node) (*objects.Node, error)
	DestroyNode(ctx context.Context, n *objects.Node) error
	ChangeNodePowerState(ctx context.Context, n *objects.Node, state string, timeout int) error
	GetBootDevice(ctx context.Context, n *objects.Node) (rpc.BootDevice, error)
	SetBootDevice(ctx context.Context, n *objects.Node, device string, persistent bool) error
	GetSupportedBootDevices(ctx context.Context, n *objects.Node) ([]string, error)
	DoNodeDeploy(ctx context.Context, n *objects.Node, rebuild bool, configdrive any, deploySteps ...[]map[string]any) error
	DoNodeTearDown(ctx context.Context, n *objects.Node) error
	DoNodeClean(ctx context.Context, n *objects.Node, steps []map[string]any, disableRamdisk ...bool) error
	DoProvisioningAction(ctx context.Context, n *objects.Node, action string) error
	InspectHardware(ctx context.Context, n *objects.Node) error
	ValidateDriverInterfaces(ctx context.Context, n *objects.Node) (map[string]rpc.InterfaceValidation, error)
	GetNodeVendorPassthruMethods(ctx context.Context, n *objects.Node) (map[string]any, error)
	CreatePort(ctx context.Context, n *objects.Node, p *objects.Port) (*objects.Port, error)
	UpdatePort(ctx context.Context, n *objects.Node, p *objects.Port) (*objects.Port, error)
	DestroyPort(ctx context.Context, n *objects.Node, p *objects.Port) error
	UpdatePortgroup(ctx context.Context, n *objects.Node, pg *objects.Portgroup) (*objects.Portgroup, error)
	DestroyPortgroup(ctx context.Context, n *objects.Node, pg *objects.Portgroup) error
	Heartbeat(ctx context.Context, n *objects.Node, callbackURL, agentVersion, tokenDigest string, extra ...rpc.HeartbeatExtra) error
	GetNodeWithToken(ctx context.Context, n *objects.Node) (*objects.Node, error)
	ContinueInspection(ctx context.Context, n *objects.Node, inventory, pluginData map[string]any) error
	GetDriverProperties(ctx context.Context, driver string) (map[string]string, error)
	VIFList(ctx context.Context, n *objects.Node) ([]rpc.VIF, error)
	VIFAttach(ctx context.Context, n *objects.Node, info map[string]any) error
	VIFDetach(ctx context.Context, n *objects.Node, vifID string) error
	InjectNMI(ctx context.Context, n *objects.Node) error
	UpdateVolumeConnector(ctx context.Context, n *objects.Node, vc *objects.VolumeConnector) (*objects.VolumeConnector, error)
	DestroyVolumeConnector(ctx context.Context, n *objects.Node, vc *objects.VolumeConnector) error
	UpdateVolumeTarget(ctx context.Context, n *objects.Node, vt *objects.VolumeTarget) (*objects.VolumeTarget, error)
	DestroyVolumeTarget(ctx context.Context, n *objects.Node, vt *objects.VolumeTarget) error
	DoNodeRescue(ctx context.Context, n *objects.Node, password string) error
	DoNodeUnrescue(ctx context.Context, n *objects.Node) error
	DoNodeService(ctx context.Context, n *objects.Node, steps []map[string]any, disableRamdisk bool) error
	AddNodeTraits(ctx context.Context, n *objects.Node, traits []string, replace bool) error
	RemoveNodeTraits(ctx context.Context, n *objects.Node, traits []string) error
	CreateAllocation(ctx context.Context, a *objects.Allocation, node *objects.Node) (*objects.Allocation, error)
	DestroyAllocation(ctx context.Context, a *objects.Allocation, node *objects.Node) error
	Management2Conductor // boot mode, secure boot, indicators, virtual media (management2.go)
	SetConsoleMode(ctx context.Context, n *objects.Node, enabled bool) error
	GetConsoleInformation(ctx context.Context, n *objects.Node) (rpc.ConsoleInfo, error)
}

var _ Conductor = rpc.ConductorAPI{}
