package main

import (
	"github.com/rivetmetal/rivet/core/client"
	"github.com/urfave/cli/v2"
)

// historyCommand is `rivet node history NODE` (API 1.78), as `baremetal
// node history list`: what happened to the node, oldest first, with the
// conductor that recorded each event; the request id ending an event
// finds its lines in the API's and the conductor's logs.
func historyCommand() *cli.Command {
	return clientLeaf("history", "show what happened to a node: failures, state changes, takeovers (API 1.78)", "NODE",
		outputFlags(), func(c *cli.Context, api *client.Client) error {
			ident, err := oneIdent(c, "node")
			if err != nil {
				return err
			}
			p, err := newOutPrinter(c)
			if err != nil {
				return err
			}
			entries, err := api.NodeHistory(c.Context, ident)
			if err != nil {
				return cliError(err, clientTarget{client.Nodes, ident})
			}
			return p.list(entries, []string{"created_at", "severity", "event_type", "conductor", "event"})
		})
}
