package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/rivetmetal/rivet/core/client"
	"github.com/urfave/cli/v2"
)

func powerCommand() *cli.Command {
	verb := func(name, clientTarget, usageText string) *cli.Command {
		return clientLeaf(name, usageText, "NODE…", []cli.Flag{concurrencyFlag()}, func(c *cli.Context, api *client.Client) error {
			return runBulk(c, api, client.Nodes, func(ctx context.Context, ident string) (string, error) {
				return fmt.Sprintf("node %s: %s requested", ident, clientTarget), api.SetPowerState(ctx, ident, clientTarget)
			}, nil)
		})
	}
	return clientGroup("power", "power nodes on, off or reboot them (asynchronous: the API answers 202)",
		verb("on", client.PowerOn, "power nodes on"),
		verb("off", client.PowerOff, "power nodes off"),
		verb("reboot", client.Reboot, "reboot nodes"),
	)
}

func bootDeviceCommand() *cli.Command {
	show := clientLeaf("show", "show a node's boot device", "NODE", outputFlags(), func(c *cli.Context, api *client.Client) error {
		ident, err := oneIdent(c, "node")
		if err != nil {
			return err
		}
		p, err := newOutPrinter(c)
		if err != nil {
			return err
		}
		bd, err := api.GetBootDevice(c.Context, ident)
		if err != nil {
			return cliError(err, clientTarget{client.Nodes, ident})
		}
		r := client.Resource{"boot_device": nil, "persistent": nil}
		if bd.BootDevice != "" {
			r["boot_device"] = bd.BootDevice
		}
		if bd.Persistent != nil {
			r["persistent"] = *bd.Persistent
		}
		return p.one(r)
	})
	set := clientLeaf("set", "set a node's boot device (pxe, disk, cdrom, bios, safe)", "NODE DEVICE",
		[]cli.Flag{&cli.BoolFlag{Name: "persistent", Usage: "keep the device for every boot, not just the next"}},
		func(c *cli.Context, api *client.Client) error {
			if c.NArg() != 2 {
				return clientUsage(c, "give a NODE and a DEVICE")
			}
			ident := c.Args().Get(0)
			err := api.SetBootDevice(c.Context, ident, c.Args().Get(1), c.Bool("persistent"))
			return cliError(err, clientTarget{client.Nodes, ident})
		})
	return clientGroup("boot-device", "show or set a node's boot device", show, set)
}

func maintenanceCommand() *cli.Command {
	set := clientLeaf("set", "put nodes in maintenance", "NODE…",
		[]cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why, shown as maintenance_reason"}, concurrencyFlag()},
		func(c *cli.Context, api *client.Client) error {
			return runBulk(c, api, client.Nodes, func(ctx context.Context, ident string) (string, error) {
				return fmt.Sprintf("node %s: maintenance on", ident), api.SetMaintenance(ctx, ident, c.String("reason"))
			}, nil)
		})
	unset := clientLeaf("unset", "take nodes out of maintenance", "NODE…", []cli.Flag{concurrencyFlag()},
		func(c *cli.Context, api *client.Client) error {
			return runBulk(c, api, client.Nodes, func(ctx context.Context, ident string) (string, error) {
				return fmt.Sprintf("node %s: maintenance off", ident), api.UnsetMaintenance(ctx, ident)
			}, nil)
		})
	return clientGroup("maintenance", "put nodes in or out of maintenance", set, unset)
}

func validateCommand() *cli.Command {
	return clientLeaf("validate", "check each of a node's interfaces", "NODE", outputFlags(), func(c *cli.Context, api *client.Client) error {
		ident, err := oneIdent(c, "node")
		if err != nil {
			return err
		}
		p, err := newOutPrinter(c)
		if err != nil {
			return err
		}
		res, err := api.Validate(c.Context, ident)
		if err != nil {
			return cliError(err, clientTarget{client.Nodes, ident})
		}
		names := make([]string, 0, len(res))
		for k := range res {
			names = append(names, k)
		}
		sort.Strings(names)
		rows := make([]client.Resource, 0, len(names))
		for _, k := range names {
			var result any
			if r := res[k].Result; r != nil {
				result = *r
			}
			rows = append(rows, client.Resource{"interface": k, "result": result, "reason": res[k].Reason})
		}
		return p.list(rows, []string{"interface", "result", "reason"})
	})
}
