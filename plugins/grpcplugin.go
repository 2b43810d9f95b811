package plugins

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv2"
	"github.com/rivetmetal/rivet/plugins/internal/wire"
)

// ProtocolVersion is the highest plugin protocol major this SDK release
// speaks. Within a major every change is additive (new RPCs, new fields); a
// new major is added beside the old ones, never instead of them.
//
//   - 1: the rivet.driver.v1.Driver service (every interface at version 1).
//   - 2: protocol 1 plus the rivet.driver.v2.Power service (power interface
//     version 2: timeouts and soft power), the rivet.driver.v2.BIOS service
//     (bios interface version 1), the rivet.driver.v2.Firmware service
//     (firmware interface version 1) and the rivet.driver.v2.Console
//     service (console interface version 1).
const ProtocolVersion = 2

// Protocols lists every protocol major this SDK release speaks, ascending:
// what Serve offers unless told otherwise, and what a host offers. The host
// sends its list; go-plugin picks the highest major both speak.
func Protocols() []int { return []int{1, 2} }

func init() {
	wire.RegisterServer = registerServer
	wire.ToStatus = toStatus
	wire.LocalPowerActor = func(d any) any { return localPower{d.(PowerInterface)} }
}

// registerServer registers on s the services of protocol major protocol
// for driver d, which advertises protocols: the plugin side of a
// connection. Serve reaches it through serverPlugin; plugins/host (for
// plugintest's in-memory connections) through wire.RegisterServer.
func registerServer(s *grpc.Server, driver any, protocols []int, protocol int) error {
	d, ok := driver.(Driver)
	if !ok {
		return fmt.Errorf("plugin: %T is not a Driver", driver)
	}
	if protocols == nil {
		protocols = Protocols()
	}
	info, err := Describe(d, protocols)
	if err != nil {
		return err
	}
	protocol = max(protocol, 1)
	srv := newServer(d, info, protocol)
	driverv1.RegisterDriverServer(s, srv)
	driverv1.RegisterValidationServer(s, &validationServer{driver: d, info: info})
	driverv2.RegisterManagement2Server(s, &management2Server{driver: d, info: info})
	if protocol >= 2 {
		driverv2.RegisterPowerServer(s, &powerServer{driver: d, info: info})
		driverv2.RegisterRAIDServer(s, &raidServer{srv: newServer(d, info, protocol)})
		driverv2.RegisterSensorsServer(s, &sensorsServer{driver: d, info: info})
		driverv2.RegisterBIOSServer(s, &biosServer{s: srv})
		driverv2.RegisterFirmwareServer(s, &firmwareServer{s: srv})
		driverv2.RegisterConsoleServer(s, &consoleServer{driver: d, info: info})
	}
	return nil
}

// serverPlugin is the go-plugin Plugin of one protocol major on the plugin
// side: it serves driver. From protocol 2 on, the Power service is
// registered beside the Driver service.
type serverPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	driver    Driver
	protocols []int // advertised in Info
	protocol  int   // the major this PluginSet entry serves
}

var _ plugin.GRPCPlugin = (*serverPlugin)(nil)

func (p *serverPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	return registerServer(s, p.driver, p.protocols, p.protocol)
}

func (p *serverPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("plugin: the driver SDK serves drivers; the host's client is in plugins/host")
}

// pluginSets returns go-plugin's VersionedPlugins serving d at the given
// protocol majors.
func pluginSets(d Driver, versions []int) map[int]plugin.PluginSet {
	sets := make(map[int]plugin.PluginSet, len(versions))
	for _, v := range versions {
		sets[v] = plugin.PluginSet{wire.PluginName: &serverPlugin{driver: d, protocols: versions, protocol: v}}
	}
	return sets
}
