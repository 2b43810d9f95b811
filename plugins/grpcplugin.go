package plugins

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
)

// PluginName is the key under which a driver is dispensed from a go-plugin
// PluginSet.
const PluginName = "driver"

// ProtocolVersion is the plugin protocol major this SDK release speaks. The
// host sends its list of majors; the plugin serves the highest common one.
// Within a major every change is additive (new RPCs, new fields); a new
// major is added beside the old one, never instead of it.
const ProtocolVersion = 1

// Handshake is the go-plugin handshake every Rivet driver plugin uses. The
// magic cookie only stops a user from running a plugin binary by hand; it is
// not a security measure (AutoMTLS and checksums are).
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "RIVET_DRIVER_PLUGIN",
	MagicCookieValue: "4f1c7f0e-3b8e-4c5a-9d2b-7a6e5c1d8b90",
}

// GRPCPlugin is the go-plugin Plugin for protocol major 1: on the plugin
// side it serves Driver, on the host side it dispenses a *Client.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Driver is served on the plugin side; nil on the host side.
	Driver Driver
	// Protocols is what the plugin advertises in Info as its protocol
	// majors; nil means []int{ProtocolVersion}.
	Protocols []int
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

// GRPCServer registers the driver service (plugin side).
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	protocols := p.Protocols
	if protocols == nil {
		protocols = []int{ProtocolVersion}
	}
	info, err := Describe(p.Driver, protocols)
	if err != nil {
		return err
	}
	driverv1.RegisterDriverServer(s, newServer(p.Driver, info))
	return nil
}

// GRPCClient returns a *Client over conn (host side).
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return &Client{rpc: driverv1.NewDriverClient(conn)}, nil
}

// PluginSets returns go-plugin's VersionedPlugins for the given protocol
// majors, each served by protocol 1's GRPCPlugin. It exists so tests can
// stand up plugins and hosts speaking other majors.
func PluginSets(d Driver, versions []int) map[int]plugin.PluginSet {
	sets := make(map[int]plugin.PluginSet, len(versions))
	for _, v := range versions {
		sets[v] = plugin.PluginSet{PluginName: &GRPCPlugin{Driver: d, Protocols: versions}}
	}
	return sets
}
