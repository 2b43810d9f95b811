// Package transport holds the gRPC options both ends of a plugin connection
// use: the plugin's server (plugins.Serve) and the host's client
// (plugins/host).
//
// Rules:
//   - HTTP/2 flow control uses a static window of Window bytes per stream and
//     per connection instead of grpc-go's default dynamic window. The
//     dynamic window comes with a bandwidth-delay estimator that sends a
//     PING, after a WINDOW_UPDATE, whenever DATA arrives and no PING of its
//     own is outstanding: on a connection that carries one small call at a
//     time that is every call, on both ends, so each call cost a second
//     write each way and woke the other process once more. Growing the
//     window pays off for bulk transfers over high-latency links, not for
//     small messages over a local socket.
//   - Nothing here changes the protocol: window sizes are HTTP/2 settings,
//     which every peer honours, so a host with these options serves plugins
//     built without them (the plugin still pings; the host answers) and the
//     other way round.
package transport

import "google.golang.org/grpc"

// Window is the static flow-control window, per stream and per connection:
// how much one side may send before the other acknowledges it. It bounds a
// stream's throughput at about Window per round trip, gigabytes a second on
// a Unix socket, far above anything a driver sends, and it is a limit, not
// an allocation.
const Window = 1 << 20

// DialOptions are the host's options for dialing a plugin.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithStaticStreamWindowSize(Window),
		grpc.WithStaticConnWindowSize(Window),
	}
}

// ServerOptions are the plugin's options for its gRPC server.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.StaticStreamWindowSize(Window),
		grpc.StaticConnWindowSize(Window),
	}
}

// NewServer is a go-plugin ServeConfig.GRPCServer: the server go-plugin
// asks for (opts carries its TLS), with ServerOptions.
func NewServer(opts []grpc.ServerOption) *grpc.Server {
	return grpc.NewServer(append(opts, ServerOptions()...)...)
}
