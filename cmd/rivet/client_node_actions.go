package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/rivetmetal/rivet/core/client"
	"github.com/urfave/cli/v2"
)

func powerCommand() *cli.Command {
	return clientGroup("power", "power nodes on, off or reboot them (asynchronous: the API answers 202)",
		powerVerb("on", client.PowerOn, "", "power nodes on"),
		powerVerb("off", client.PowerOff, client.SoftPowerOff, "power nodes off"),
		powerVerb("reboot", client.Reboot, client.SoftReboot, "reboot nodes"),
	)
}

// rebootCommand is `rivet node reboot`, as `baremetal node reboot`: the
// same as `rivet node power reboot`.
func rebootCommand() *cli.Command {
	return powerVerb("reboot", client.Reboot, client.SoftReboot, "reboot nodes (the same as rivet node power reboot)")
}

// powerVerb is one power command: target, or softTarget with --soft (when
// the verb has one), with an optional --power-timeout. Soft power and
// timeouts need API 1.27, checked once before any node is touched.
func powerVerb(name, target, softTarget, usage string) *cli.Command {
	flags := append([]cli.Flag{concurrencyFlag(),
		&cli.IntFlag{Name: "power-timeout", Usage: "wait at most `SECONDS` for each node to get there, else record a failure in last_error (API 1.27)"},
		&cli.BoolFlag{Name: "wait", Usage: "wait until each node's power state is " + client.PowerReached(target)}},
		timingFlags()...)
	if softTarget != "" {
		flags = append(flags, &cli.BoolFlag{Name: "soft", Usage: "ask the operating system to " + name +
			" (ACPI) instead of cutting or cycling the power; without --power-timeout the conductor waits [conductor] soft_power_off_timeout (API 1.27)"})
	}
	return clientLeaf(name, usage, "NODE…", flags, func(c *cli.Context, api *client.Client) error {
		req := client.PowerRequest{Target: target, Timeout: c.Int("power-timeout")}
		if c.Bool("soft") {
			req.Target = softTarget
		}
		if c.IsSet("power-timeout") && req.Timeout < 1 {
			return clientUsage(c, "--power-timeout must be a positive number of seconds")
		}
		if c.NArg() > 0 {
			if err := api.Require(c.Context, client.PowerVersion(req), powerWhat(c)); err != nil {
				return cliError(err, clientTarget{kind: client.Nodes})
			}
		}
		done := req.Target + " requested"
		if req.Timeout > 0 {
			done += fmt.Sprintf(" (timeout %ds)", req.Timeout)
		}
		return runBulk(c, api, client.Nodes, func(ctx context.Context, ident string) (string, error) {
			if err := api.ChangePowerState(ctx, ident, req); err != nil || !c.Bool("wait") {
				return fmt.Sprintf("node %s: %s", ident, done), err
			}
			st, err := api.WaitForPowerState(ctx, ident, client.WaitOptions{Target: client.PowerReached(req.Target),
				Timeout: c.Duration("timeout"), Interval: c.Duration("interval")})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("node %s: %s", ident, st.String("power_state")), nil
		}, nil)
	})
}

// powerWhat names the flag that needs a newer API, for the error.
func powerWhat(c *cli.Context) string {
	if c.Bool("soft") {
		return "--soft"
	}
	return "--power-timeout"
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
