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
	fieldFlags: interfaceFlags(),
}

// interfaceFlags are --boot-interface … --vendor-interface: the hardware
// interface implementations of a node (network_interface from API 1.20, the
// others from 1.31; rivet driver show DRIVER lists what a hardware type
// enables).
func interfaceFlags() []fieldFlag {
	var out []fieldFlag
	for _, iface := range []string{"boot", "console", "deploy", "inspect", "management", "network", "power", "raid", "vendor"} {
		out = append(out, fieldFlag{name: iface + "-interface", field: iface + "_interface",
			usage: "the " + iface + " interface `IMPLEMENTATION` (see rivet driver show)"})
	}
	return out
}

func nodeCommand() *cli.Command {
	extra := append([]*cli.Command{powerCommand(), rebootCommand(), bootDeviceCommand(), maintenanceCommand(), validateCommand(), waitCommand(),
		vifCommand(), injectNMICommand(), historyCommand()},
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
		nodeFlag:    true,
	}.group()
}

func portgroupCommand() *cli.Command {
	return resourceSpec{
		kind:        client.Portgroups,
		about:       "manage portgroups (bonds) of nodes (API 1.23)",
		cols:        []string{"uuid", "address", "name"},
		filters:     map[string]string{"node": "node", "address": "address"},
		filterUsage: map[string]string{"node": "only portgroups of this `NODE`", "address": "only the portgroup with this MAC `ADDRESS`"},
		nodeFlag:    true,
	}.group()
}

func chassisCommand() *cli.Command {
	return resourceSpec{
		kind:  client.Chassis,
		about: "manage chassis (groups of nodes)",
		cols:  []string{"uuid", "description"},
	}.group()
}
