package host

import (
	"context"
	"fmt"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv2"
)

// errNoConsole is what a plugin connected below protocol 2 answers: the
// Console service exists only from protocol 2.
func (c *Client) errNoConsole(op string) error {
	return fmt.Errorf("%s: plugin protocol %d has no console interface (console interface version 1 needs protocol 2): %w",
		op, c.protocol, plugins.ErrNotSupported)
}

// StartConsole implements plugins.ConsoleInterface.
func (c *Client) StartConsole(ctx context.Context, node plugins.Node, ep plugins.ConsoleEndpoint) (plugins.ConsoleInfo, error) {
	if c.console == nil {
		return plugins.ConsoleInfo{}, c.errNoConsole("start console")
	}
	n, err := nodeToProto(node)
	if err != nil {
		return plugins.ConsoleInfo{}, err
	}
	resp, err := c.console.StartConsole(ctx, &driverv2.StartConsoleRequest{Node: n, Address: ep.Address, Port: int32(ep.Port)})
	if err != nil {
		return plugins.ConsoleInfo{}, fromStatus(err)
	}
	info := plugins.ConsoleInfo{Type: resp.GetType(), URL: resp.GetUrl()}
	if err := info.Validate(); err != nil {
		return plugins.ConsoleInfo{}, fmt.Errorf("start console: plugin answered: %w", err)
	}
	return info, nil
}

// StopConsole implements plugins.ConsoleInterface.
func (c *Client) StopConsole(ctx context.Context, node plugins.Node) error {
	if c.console == nil {
		return c.errNoConsole("stop console")
	}
	return c.nodeCall(ctx, node, c.console.StopConsole)
}
