// Package wire holds what both ends of a plugin connection must agree on
// and that a driver author never names: the go-plugin handshake, the name
// a driver is dispensed under, the describe-mode variable, the error kinds
// carried in driverv1.ErrorDetail and the JSON-like map conversion. The
// plugin side (package plugins: Serve and its gRPC server) and the host
// side (package plugins/host: the client) both import it; it imports
// neither, only the generated protocol's libraries.
package wire

import (
	"fmt"
	"reflect"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
)

// PluginName is the key under which a driver is dispensed from a go-plugin
// PluginSet.
const PluginName = "driver"

// Handshake is the go-plugin handshake every Rivet driver plugin uses. The
// magic cookie only stops a user from running a plugin binary by hand; it is
// not a security measure (AutoMTLS and checksums are). Its ProtocolVersion
// stays 1: the majors themselves are negotiated through VersionedPlugins.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "RIVET_DRIVER_PLUGIN",
	MagicCookieValue: "4f1c7f0e-3b8e-4c5a-9d2b-7a6e5c1d8b90",
}

// DescribeEnv, when set to "1" in a plugin's environment, makes Serve print
// the plugin's Info as JSON on stdout and exit 0 instead of serving. The host
// uses it to report a plugin's full version ranges when go-plugin refuses it.
const DescribeEnv = "RIVET_PLUGIN_DESCRIBE"

// Error kinds carried in driverv1.ErrorDetail.Kind.
const (
	KindNotSupported      = "not_supported"
	KindInvalidDriverInfo = "invalid_driver_info"
	KindBMCUnreachable    = "bmc_unreachable"
)

// RegisterServer registers, on s, the services protocol major protocol
// serves for driver (a plugins.Driver), advertising protocols. Package
// plugins sets it when it is initialised; plugins/plugintest uses it,
// through plugins/host, to serve a driver over an in-memory connection.
var RegisterServer func(s *grpc.Server, driver any, protocols []int, protocol int) error

// LocalPowerActor returns, for a plugins.PowerInterface, the value with
// CheckPowerAction and PowerAction that the plugin's Power service uses:
// set when plugins is initialised, for plugins/host's LocalPowerActor.
var LocalPowerActor func(d any) any

// ToStatus is package plugins' toStatus, how a driver's error leaves the
// plugin: set when plugins is initialised, for the host's tests of the
// round trip.
var ToStatus func(error) error

var jsonObject = reflect.TypeFor[map[string]any]()

// MapToStruct converts a JSON-like map. A value whose type is a named
// map[string]any (plugins.DriverInfo) is converted to the plain map first.
// The error names the offending key but never its value, which may be a
// secret.
func MapToStruct(m map[string]any) (*structpb.Struct, error) {
	if m == nil {
		return nil, nil
	}
	out := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(m))}
	for k, v := range m {
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Map && rv.Type() != jsonObject && rv.Type().ConvertibleTo(jsonObject) {
			v = rv.Convert(jsonObject).Interface()
		}
		pv, err := structpb.NewValue(v)
		if err != nil {
			return nil, fmt.Errorf("key %q: value of type %T is not JSON-like", k, v)
		}
		out.Fields[k] = pv
	}
	return out, nil
}
