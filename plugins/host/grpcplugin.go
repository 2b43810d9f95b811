package host

import (
	"context"
	"errors"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv2"
	"github.com/rivetmetal/rivet/plugins/internal/wire"
)

// GRPCPlugin is the go-plugin Plugin of one protocol major on the host
// side: it dispenses a *Client. With Driver set it also serves that driver
// (the SDK's plugin side), for an in-memory connection
// (plugin.TestPluginGRPCConn): how plugintest's InProcess reaches a driver.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Driver is served by GRPCServer; nil on a host.
	Driver plugins.Driver
	// Protocols is what the served driver advertises in Info as its
	// protocol majors; nil means plugins.Protocols().
	Protocols []int
	// Protocol is the major this PluginSet entry speaks; 0 means 1. From
	// 2 on, the Power service is used beside the Driver service.
	Protocol int
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

// GRPCServer serves p.Driver at p.Protocol with the SDK's server.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Driver == nil {
		return errors.New("host: GRPCPlugin has no Driver to serve")
	}
	return wire.RegisterServer(s, p.Driver, p.Protocols, p.protocol())
}

// GRPCClient returns a *Client over conn for p.Protocol.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	c := &Client{rpc: driverv1.NewDriverClient(conn), protocol: p.protocol()}
	c.validation = driverv1.NewValidationClient(conn)
	c.mgmt2 = driverv2.NewManagement2Client(conn)
	if c.protocol >= 2 {
		c.power = driverv2.NewPowerClient(conn)
		c.raid = driverv2.NewRAIDClient(conn)
		c.sensors = driverv2.NewSensorsClient(conn)
		c.bios, c.firmware = driverv2.NewBIOSClient(conn), driverv2.NewFirmwareClient(conn)
		c.console = driverv2.NewConsoleClient(conn)
	}
	return c, nil
}

func (p *GRPCPlugin) protocol() int { return max(p.Protocol, 1) }

// pluginSets returns go-plugin's VersionedPlugins for a host offering the
// given protocol majors.
func pluginSets(versions []int) map[int]plugin.PluginSet {
	sets := make(map[int]plugin.PluginSet, len(versions))
	for _, v := range versions {
		sets[v] = plugin.PluginSet{wire.PluginName: &GRPCPlugin{Protocols: versions, Protocol: v}}
	}
	return sets
}
