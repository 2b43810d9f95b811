package rpc

import (
	"context"

	"github.com/rivetmetal/rivet/core/objects"
)

// ConsoleInfo is Ironic's console_info: {"type": "socat", "url":
// "tcp://127.0.0.1:10000"}.
type ConsoleInfo struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// SetConsoleMode starts (enabled) or stops the node's console (RPC 1.5,
// Ironic's set_console_mode). The conductor checks the node's console
// interface at once (UnsupportedDriverExtension, 400) and switches the
// console in the background; asking for the state the node has does
// nothing. Capped below 1.5, *CapError before anything is sent (the REST
// API answers 406).
func (c ConductorAPI) SetConsoleMode(ctx context.Context, n *objects.Node, enabled bool) error {
	_, err := c.call(ctx, n, "set_console_mode", map[string]any{"node_id": n.UUID, "enabled": enabled})
	return err
}

// GetConsoleInformation returns the console_info of the node's enabled
// console (RPC 1.5, Ironic's get_console_information); NodeConsoleNotEnabled
// (400) when it is not enabled. Capped below 1.5, *CapError.
func (c ConductorAPI) GetConsoleInformation(ctx context.Context, n *objects.Node) (ConsoleInfo, error) {
	var info ConsoleInfo
	reply, err := c.call(ctx, n, "get_console_information", map[string]any{"node_id": n.UUID})
	if err == nil {
		err = reply.Decode(&info)
	}
	return info, err
}
