package rpc

import "github.com/rivetmetal/rivet/core/version"

// Conductor RPC API versions that introduced methods or arguments.
var (
	v1_0 = version.Version{Major: 1, Minor: 0}
	v1_1 = version.Version{Major: 1, Minor: 1} // change_node_power_state: soft targets and timeout (REST API 1.27)
	v1_2 = version.Version{Major: 1, Minor: 2} // vif_list, vif_attach, vif_detach (REST API 1.28)
	v1_3 = version.Version{Major: 1, Minor: 3} // inject_nmi (REST API 1.29)
	v1_4 = version.Version{Major: 1, Minor: 4} // agent tokens: get_node_with_token, heartbeat(agent_token_sha256)
)

// ConductorMethods is the conductor RPC API at APIVersion, named as Ironic's
// ConductorManager methods so operators reading logs of either recognise them.
// Adding a method or an argument bumps APIVersion and core/release HEAD.RPC,
// and the new item records the version that introduced it.
func ConductorMethods() *Methods {
	req := func(name string) Arg { return Arg{Name: name, Since: v1_0, Required: true} }
	opt := func(name string) Arg { return Arg{Name: name, Since: v1_0} }
	// reqAt is a required argument of a method introduced at since.
	reqAt := func(since version.Version, name string) Arg { return Arg{Name: name, Since: since, Required: true} }
	t, err := NewMethods(APIVersion,
		Method{Name: "create_node", Since: v1_0, Args: []Arg{req("node")}},
		Method{Name: "update_node", Since: v1_0, Args: []Arg{req("node")}},
		Method{Name: "destroy_node", Since: v1_0, Args: []Arg{req("node_id")}},
		Method{Name: "change_node_power_state", Since: v1_0, Args: []Arg{req("node_id"),
			{Name: "new_state", Since: v1_0, Required: true, Values: map[string]version.Version{"soft power off": v1_1, "soft rebooting": v1_1}},
			{Name: "timeout", Since: v1_1, Policy: RefuseAboveCap}}},
		Method{Name: "get_boot_device", Since: v1_0, Args: []Arg{req("node_id")}},
		Method{Name: "set_boot_device", Since: v1_0, Args: []Arg{req("node_id"), req("device"), opt("persistent")}},
		Method{Name: "get_supported_boot_devices", Since: v1_0, Args: []Arg{req("node_id")}},
		Method{Name: "do_node_deploy", Since: v1_0, Args: []Arg{req("node_id"), opt("rebuild"), opt("configdrive")}},
		Method{Name: "do_node_tear_down", Since: v1_0, Args: []Arg{req("node_id")}},
		Method{Name: "do_node_clean", Since: v1_0, Args: []Arg{req("node_id"), req("clean_steps")}},
		Method{Name: "do_provisioning_action", Since: v1_0, Args: []Arg{req("node_id"), req("action")}},
		Method{Name: "inspect_hardware", Since: v1_0, Args: []Arg{req("node_id")}},
		Method{Name: "validate_driver_interfaces", Since: v1_0, Args: []Arg{req("node_id")}},
		Method{Name: "get_node_vendor_passthru_methods", Since: v1_0, Args: []Arg{req("node_id")}},
		Method{Name: "vendor_passthru", Since: v1_0, Args: []Arg{req("node_id"), req("driver_method"), req("http_method"), opt("info")}},
		Method{Name: "get_driver_properties", Since: v1_0, Args: []Arg{req("driver_name")}},
		Method{Name: "create_port", Since: v1_0, Args: []Arg{req("port")}},
		Method{Name: "update_port", Since: v1_0, Args: []Arg{req("port")}},
		Method{Name: "destroy_port", Since: v1_0, Args: []Arg{req("port")}},
		Method{Name: "update_portgroup", Since: v1_0, Args: []Arg{req("portgroup")}},
		Method{Name: "destroy_portgroup", Since: v1_0, Args: []Arg{req("portgroup")}},
		// agent_token_sha256 is the digest of the agent's token: the REST API
		// checks the token itself too, so an older conductor that cannot
		// check it is sent the heartbeat without (OmitAboveCap).
		Method{Name: "heartbeat", Since: v1_0, Args: []Arg{req("node_id"), req("callback_url"), opt("agent_version"),
			{Name: "agent_token_sha256", Since: v1_4}}},
		Method{Name: "vif_list", Since: v1_2, Args: []Arg{reqAt(v1_2, "node_id")}},
		Method{Name: "vif_attach", Since: v1_2, Args: []Arg{reqAt(v1_2, "node_id"), reqAt(v1_2, "vif_info")}},
		Method{Name: "vif_detach", Since: v1_2, Args: []Arg{reqAt(v1_2, "node_id"), reqAt(v1_2, "vif_id")}},
		Method{Name: "inject_nmi", Since: v1_3, Args: []Arg{reqAt(v1_3, "node_id")}},
		Method{Name: "get_node_with_token", Since: v1_4, Args: []Arg{reqAt(v1_4, "node_id")}},
	)
	if err != nil {
		panic(err) // the table is code; TestConductorMethodsValid catches this
	}
	return t
}
