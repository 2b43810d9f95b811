package plugins

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv2"
)

// PluginName is the key under which a driver is dispensed from a go-plugin
// PluginSet.
const PluginName = "driver"

// ProtocolVersion is the highest plugin protocol major this SDK release
// speaks. Within a major every change is additive (new RPCs, new fields); a
// new major is added beside the old ones, never instead of them.
//
//   - 1: the rivet.driver.v1.Driver service (every interface at version 1).
//   - 2: protocol 1 plus the rivet.driver.v2.Power service (power interface
//     version 2: timeouts and soft power).
const ProtocolVersion = 2

// Protocols lists every protocol major this SDK release speaks, ascending:
// what Serve offers unless told otherwise, and what a host offers. The host
// sends its list; go-plugin picks the highest major both speak.
func Protocols() []int { return []int{1, 2} }

// Handshake is the go-plugin handshake every Rivet driver plugin uses. The
// magic cookie only stops a user from running a plugin binary by hand; it is
// not a security measure (AutoMTLS and checksums are). Its ProtocolVersion
// stays 1: the majors themselves are negotiated through VersionedPlugins.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "RIVET_DRIVER_PLUGIN",
	MagicCookieValue: "4f1c7f0e-3b8e-4c5a-9d2b-7a6e5c1d8b90",
}

// GRPCPlugin is the go-plugin Plugin of one protocol major: on the plugin
// side it serves Driver, on the host side it dispenses a *Client.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Driver is served on the plugin side; nil on the host side.
	Driver Driver
	// Protocols is what the plugin advertises in Info as its protocol
	// majors; nil means Protocols().
	Protocols []int
	// Protocol is the major this PluginSet entry serves; 0 means 1. From 2
	// on, the Power service is registered (plugin side) and used (host
	// side) beside the Driver service.
	Protocol int
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

// GRPCServer registers the services of p.Protocol (plugin side).
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	protocols := p.Protocols
	if protocols == nil {
		protocols = Protocols()
	}
	info, err := Describe(p.Driver, protocols)
	if err != nil {
		return err
	}
	driverv1.RegisterDriverServer(s, newServer(p.Driver, info, p.protocol()))
	driverv1.RegisterValidationServer(s, &validationServer{driver: p.Driver, info: info})
	if p.protocol() >= 2 {
		driverv2.RegisterPowerServer(s, &powerServer{driver: p.Driver, info: info})
	}
	return nil
}

// GRPCClient returns a *Client over conn for p.Protocol (host side).
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	c := &Client{rpc: driverv1.NewDriverClient(conn), protocol: p.protocol()}
	c.validation = driverv1.NewValidationClient(conn)
	if c.protocol >= 2 {
		c.power = driverv2.NewPowerClient(conn)
	}
	return c, nil
}

func (p *GRPCPlugin) protocol() int { return max(p.Protocol, 1) }

// PluginSets returns go-plugin's VersionedPlugins for the given protocol
// majors. A host passes nil for d.
func PluginSets(d Driver, versions []int) map[int]plugin.PluginSet {
	sets := make(map[int]plugin.PluginSet, len(versions))
	for _, v := range versions {
		sets[v] = plugin.PluginSet{PluginName: &GRPCPlugin{Driver: d, Protocols: versions, Protocol: v}}
	}
	return sets
}
