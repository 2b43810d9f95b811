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

// InspectionRulesOpts holds the [inspection_rules] section (Ironic's
// options of the same names).
type InspectionRulesOpts struct {
	BuiltInRules string
	MaskSecrets  string
}

func inspectionRulesSection() section {
	return section{name: "inspection_rules", help: "Options of inspection rules (API 1.96), run by the conductor on the data of every inspection.", options: []*Option{
		strOpt("built_in_rules", "", func(c *Config) *string { return &c.InspectionRules.BuiltInRules },
			"Path to a YAML file of built-in inspection rules: a list of rules as the API takes "+
				"them (uuid optional, any priority), run with the stored rules after every "+
				"inspection. Read at each inspection, so edits apply without a restart; a file "+
				"that is missing or invalid fails the inspection with the reason. Empty: none."),
		strOpt("mask_secrets", "always", func(c *Config) *string { return &c.InspectionRules.MaskSecrets },
			"Whether the values of password, auth_token and bmc_password keys in the inventory "+
				"and plugin data are masked (\"***\") in what rules see; the node's own secrets "+
				"(driver_info passwords, tokens) are masked whenever the data is.").choices(
			Choice{"always", "masked for every rule"},
			Choice{"never", "never masked"},
			Choice{"sensitive", "unmasked for sensitive rules only"}),
	}}
}

// AutoDiscoveryOpts holds the [auto_discovery] section (Ironic's options
// of the same names): enrolling the machines whose agent posts inspection
// data no node matches.
type AutoDiscoveryOpts struct {
	Enabled bool
	Driver  string
}

func autoDiscoverySection() section {
	return section{name: "auto_discovery", help: "Discovery of unknown machines by in-band inspection (read by the API and the conductors: set them alike).", options: []*Option{
		boolOpt("enabled", false, func(c *Config) *bool { return &c.AutoDiscovery.Enabled },
			"Enroll a node for inspection data (POST /v1/continue_inspection) whose MAC and BMC "+
				"addresses match no node: it is created in enroll with the driver below and "+
				"inspect_interface agent, and its data is processed as for an inspected node "+
				"(hooks, inspection rules: plugin_data.auto_discovered is true). Any machine that "+
				"can reach the inspection endpoint is then enrolled."),
		strOpt("driver", "", func(c *Config) *string { return &c.AutoDiscovery.Driver },
			"Hardware type of the nodes discovery enrolls; required when enabled is true. "+
				"Inspection rules usually set its driver_info from the inventory."),
	}}
}
