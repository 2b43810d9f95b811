package plugins

import (
	"context"
	"fmt"
	"net"
	"strconv"
)

// InterfaceConsole is the "console" hardware interface (version 1: the
// rivet.driver.v2.Console service, protocol 2).
const InterfaceConsole Interface = "console"

// Console types, as Ironic's console_info "type" spells them.
const (
	// ConsoleSocat is a raw TCP serial console (Ironic's ipmitool-socat).
	ConsoleSocat = "socat"
	// ConsoleVNC is a graphical console.
	ConsoleVNC = "vnc"
)

// ConsoleEndpoint is where the conductor wants a serial console served:
// the plugin listens on Address:Port (TCP) until StopConsole. The conductor
// picks Port from its [console] port_range and Address from
// [console] socat_address. A graphical console ignores it.
type ConsoleEndpoint struct {
	Address string
	Port    int
}

// HostPort is Address:Port, with IPv6 addresses in brackets.
func (e ConsoleEndpoint) HostPort() string {
	return net.JoinHostPort(e.Address, strconv.Itoa(e.Port))
}

// ConsoleInfo is what GET /v1/nodes/{node}/states/console answers as
// console_info: {"type": "socat", "url": "tcp://127.0.0.1:10000"}. URL
// never carries credentials.
type ConsoleInfo struct {
	Type string
	URL  string
}

// Validate checks what a driver returned before it reaches the API.
func (i ConsoleInfo) Validate() error {
	if i.Type == "" || i.URL == "" {
		return fmt.Errorf("console info needs a type and a url (got type %q)", i.Type)
	}
	return nil
}

// ConsoleInterface is the console hardware interface, version 1.
//
// StartConsole makes node's console reachable and returns how to reach it.
// A serial console listens on ep until StopConsole; starting a console
// already started for the node restarts it on ep (the conductor calls it
// again after a takeover or a plugin restart). StopConsole ends it and
// closes any client connection; stopping a console that is not running is
// not an error.
type ConsoleInterface interface {
	StartConsole(ctx context.Context, node Node, ep ConsoleEndpoint) (ConsoleInfo, error)
	StopConsole(ctx context.Context, node Node) error
}
