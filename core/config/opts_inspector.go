package config

// InspectorOpts holds the [inspector] section: in-band inspection through
// the ramdisk agent (the "agent" inspect interface), with Ironic's option
// names.
type InspectorOpts struct {
	CallbackEndpointOverride string
	AddPorts                 string
	KeepPorts                string
	UpdatePXEEnabled         bool
	Hooks                    []string
}

// DefaultInspectionHooks are the hooks [inspector] hooks runs by default:
// Ironic's default_hooks (ramdisk-error, validate-interfaces, ports,
// architecture) and the hooks that fill the node properties a scheduler
// needs (cpus, memory, root-device for local_gb, boot-mode).
var DefaultInspectionHooks = []string{"ramdisk-error", "validate-interfaces", "ports", "architecture",
	"cpus", "memory", "root-device", "boot-mode"}

func inspectorSection() section {
	return section{name: "inspector", help: "Options of in-band inspection (the agent inspect interface).", options: []*Option{
		strOpt("callback_endpoint_override", "", func(c *Config) *string { return &c.Inspector.CallbackEndpointOverride },
			"Base URL of the Rivet API the ramdisk agent posts its inspection data to (its "+
				"/v1/continue_inspection); passed as ipa-inspection-callback-url and ipa-api-url "+
				"on the kernel command line of network-booted ramdisks. Empty: nothing is "+
				"passed, the ramdisk must know the URL (an ISO built with ipa-api-url)."),
		strOpt("add_ports", "pxe", func(c *Config) *string { return &c.Inspector.AddPorts },
			"Which MAC addresses of the inspected inventory the ports hook adds as ports.").choices(
			Choice{"all", "all MAC addresses"},
			Choice{"active", "MAC addresses of NICs with an IP address"},
			Choice{"pxe", "only the MAC address of the NIC the node booted from (all with an IP address when the agent does not say)"},
			Choice{"disabled", "no ports are added"}),
		strOpt("keep_ports", "all", func(c *Config) *string { return &c.Inspector.KeepPorts },
			"Which of the node's ports to keep after inspection.").choices(
			Choice{"all", "keep every port"},
			Choice{"present", "keep only ports whose MAC address is in the inventory"},
			Choice{"added", "keep only the ports add_ports selects"}),
		boolOpt("update_pxe_enabled", true, func(c *Config) *bool { return &c.Inspector.UpdatePXEEnabled },
			"Set the pxe_enabled field of the node's ports from the inventory (true only for "+
				"the NIC the node booted from)."),
		listOpt("hooks", DefaultInspectionHooks, func(c *Config) *[]string { return &c.Inspector.Hooks },
			"Inspection hooks run, in this order, on the data the agent posts. Known: "+
				"ramdisk-error, validate-interfaces, ports, architecture, cpus, memory, "+
				"root-device, boot-mode.").check(checkHooks),
	}}
}

// knownHooks are the inspection hooks Rivet implements (core/conductor).
var knownHooks = map[string]bool{"ramdisk-error": true, "validate-interfaces": true, "ports": true,
	"architecture": true, "cpus": true, "memory": true, "root-device": true, "boot-mode": true}

func checkHooks(v any) string {
	list, _ := v.([]string)
	for _, h := range list {
		if !knownHooks[h] {
			return "unknown inspection hook " + h + " (known: ramdisk-error, validate-interfaces, ports, architecture, cpus, memory, root-device, boot-mode)"
		}
	}
	for _, h := range list {
		if h == "ports" && !contains(list, "validate-interfaces") {
			return "the ports hook needs validate-interfaces"
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
