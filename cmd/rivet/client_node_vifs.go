package main

import (
	"context"
	"fmt"

	"github.com/rivetmetal/rivet/core/client"
	"github.com/urfave/cli/v2"
)

// vifCommand is `rivet node vif list|attach|detach` (API 1.28), as
// `baremetal node vif …`.
func vifCommand() *cli.Command {
	list := clientLeaf("list", "list the VIFs attached to a node", "NODE", outputFlags(), func(c *cli.Context, api *client.Client) error {
		ident, err := oneIdent(c, "node")
		if err != nil {
			return err
		}
		p, err := newOutPrinter(c)
		if err != nil {
			return err
		}
		vifs, err := api.ListVIFs(c.Context, ident)
		if err != nil {
			return cliError(err, clientTarget{client.Nodes, ident})
		}
		rows := make([]client.Resource, len(vifs))
		for i, v := range vifs {
			rows[i] = client.Resource{"id": v.ID}
		}
		return p.list(rows, []string{"id"})
	})
	attach := clientLeaf("attach", "attach a VIF to a free port or portgroup of a node", "NODE VIF",
		[]cli.Flag{&cli.StringSliceFlag{Name: "vif-info", Usage: "extra `KEY=VALUE` (KEY:=JSON) sent with the VIF id; repeatable"}},
		func(c *cli.Context, api *client.Client) error {
			if c.NArg() != 2 {
				return clientUsage(c, "give a NODE and a VIF id")
			}
			info, err := parseAssignments(c.StringSlice("vif-info"))
			if err != nil {
				return err
			}
			if _, ok := info["id"]; ok {
				return clientUsage(c, "the VIF id is the second argument, not --vif-info id=…")
			}
			ident, vif := c.Args().Get(0), c.Args().Get(1)
			if err := api.AttachVIF(c.Context, ident, vif, info); err != nil {
				return cliError(err, clientTarget{client.Nodes, ident})
			}
			fmt.Fprintf(c.App.Writer, "node %s: VIF %s attached\n", ident, vif)
			return nil
		})
	detach := clientLeaf("detach", "detach VIFs from a node", "NODE VIF…", nil, func(c *cli.Context, api *client.Client) error {
		if c.NArg() < 2 {
			return clientUsage(c, "give a NODE and at least one VIF id")
		}
		ident := c.Args().First()
		for _, vif := range c.Args().Tail() {
			if err := api.DetachVIF(c.Context, ident, vif); err != nil {
				return cliError(err, clientTarget{client.Nodes, ident})
			}
			fmt.Fprintf(c.App.Writer, "node %s: VIF %s detached\n", ident, vif)
		}
		return nil
	})
	return clientGroup("vif", "list, attach and detach a node's virtual network interfaces (API 1.28)", list, attach, detach)
}

// injectNMICommand is `rivet node inject-nmi NODE…` (API 1.29), as
// `baremetal node inject nmi`.
func injectNMICommand() *cli.Command {
	return clientLeaf("inject-nmi", "send a non-maskable interrupt to nodes, e.g. to make a hung OS dump its kernel (API 1.29)",
		"NODE…", []cli.Flag{concurrencyFlag()}, func(c *cli.Context, api *client.Client) error {
			return runBulk(c, api, client.Nodes, func(ctx context.Context, ident string) (string, error) {
				return fmt.Sprintf("node %s: NMI injected", ident), api.InjectNMI(ctx, ident)
			}, nil)
		})
}
