package main

import (
	"github.com/rivetmetal/rivet/core/client"
	"github.com/urfave/cli/v2"
)

var nodeSpec = resourceSpec{
	kind:  client.Nodes,
	about: "manage bare-metal nodes (NODE is a UUID or a name)",
	cols:  []string{"uuid", "name", "instance_uuid", "power_state", "provision_state", "maintenance"},
	filters: map[string]string{
		"provision-state": "provision_state",
		"driver":          "driver",
		"maintenance":     "maintenance",
		"associated":      "associated",
	},
	filterUsage: map[string]string{
		"provision-state": "only nodes in this provision `STATE`",
		"driver":          "only nodes with this `DRIVER`",
		"maintenance":     "only nodes with maintenance `true` or `false`",
		"associated":      "only nodes with (true) or without (false) an instance",
	},
}

func nodeCommand() *cli.Command {
	extra := append([]*cli.Command{powerCommand(), bootDeviceCommand(), maintenanceCommand(), validateCommand(), waitCommand(),
		vifCommand(), injectNMICommand()},
		provisionCommands()...)
	return nodeSpec.group(extra...)
}

func portCommand() *cli.Command {
	return resourceSpec{
		kind:        client.Ports,
		about:       "manage ports (NICs) of nodes",
		cols:        []string{"uuid", "address"},
		filters:     map[string]string{"node": "node", "address": "address", "portgroup": "portgroup"},
		filterUsage: map[string]string{"node": "only ports of this `NODE`", "address": "only the port with this MAC `ADDRESS`", "portgroup": "only ports of this `PORTGROUP`"},
	}.group()
}

func portgroupCommand() *cli.Command {
	return resourceSpec{
		kind:        client.Portgroups,
		about:       "manage portgroups (bonds) of nodes (API 1.23)",
		cols:        []string{"uuid", "address", "name"},
		filters:     map[string]string{"node": "node", "address": "address"},
		filterUsage: map[string]string{"node": "only portgroups of this `NODE`", "address": "only the portgroup with this MAC `ADDRESS`"},
	}.group()
}

func chassisCommand() *cli.Command {
	return resourceSpec{
		kind:  client.Chassis,
		about: "manage chassis (groups of nodes)",
		cols:  []string{"uuid", "description"},
	}.group()
}
