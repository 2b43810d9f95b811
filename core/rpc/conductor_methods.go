package rpc

import (
	"github.com/rivetmetal/rivet/core/steps"
	"github.com/rivetmetal/rivet/core/version"
)

// Conductor RPC API versions that introduced methods or arguments.
var (
	v1_0 = version.Version{Major: 1, Minor: 0}
	v1_1 = version.Version{Major: 1, Minor: 1} // change_node_power_state: soft targets and timeout (REST API 1.27)
	v1_2 = version.Version{Major: 1, Minor: 2} // vif_list, vif_attach, vif_detach (REST API 1.28)
	v1_3 = version.Version{Major: 1, Minor: 3} // inject_nmi (REST API 1.29)
	v1_4 = version.Version{Major: 1, Minor: 4} // agent tokens: get_node_with_token, heartbeat(agent_token_sha256)
	v1_5 = version.Version{Major: 1, Minor: 5} // release 0.3: see the methods Since v1_5 below
	v1_6 = version.Version{Major: 1, Minor: 6} // servicing's reserved steps (do_node_service), unhold
)

// ConductorMethods is the conductor RPC API at APIVersion, named as Ironic's
// ConductorManager methods so operators reading logs of either recognise them.
// Adding a method or an argument bumps APIVersion and core/release HEAD.RPC,
// and the new item records the version that introduced it and its wire
// type; TestMethodsGolden checks the table against testdata/HEAD/methods.json
// and every cut release's testdata/<release>/methods.json.
func ConductorMethods() *Methods {
	req := func(name string, typ ArgType) Arg { return Arg{Name: name, Since: v1_0, Type: typ, Required: true} }
	opt := func(name string, typ ArgType) Arg { return Arg{Name: name, Since: v1_0, Type: typ} }
	// reqAt is a required argument of a method introduced at since.
	reqAt := func(since version.Version, name string, typ ArgType) Arg {
		return Arg{Name: name, Since: since, Type: typ, Required: true}
	}
	nodeID := req("node_id", TypeString)
	reservedSteps := map[string]version.Version{}
	for _, name := range steps.ReservedNames {
		reservedSteps[name] = v1_6
	}
	t, err := NewMethods(APIVersion,
		Method{Name: "create_node", Since: v1_0, Args: []Arg{req("node", TypeNode)}},
		Method{Name: "update_node", Since: v1_0, Args: []Arg{req("node", TypeNode)}},
		Method{Name: "destroy_node", Since: v1_0, Args: []Arg{nodeID}},
		Method{Name: "change_node_power_state", Since: v1_0, Args: []Arg{nodeID,
			{Name: "new_state", Since: v1_0, Type: TypeString, Required: true, Values: map[string]version.Version{"soft power off": v1_1, "soft rebooting": v1_1}},
			{Name: "timeout", Since: v1_1, Type: TypeInteger, Policy: RefuseAboveCap}}},
		Method{Name: "get_boot_device", Since: v1_0, Args: []Arg{nodeID}},
		Method{Name: "set_boot_device", Since: v1_0, Args: []Arg{nodeID, req("device", TypeString), opt("persistent", TypeBoolean)}},
		Method{Name: "get_supported_boot_devices", Since: v1_0, Args: []Arg{nodeID}},
		Method{Name: "do_node_deploy", Since: v1_0, Args: []Arg{nodeID, opt("rebuild", TypeBoolean), opt("configdrive", TypeAny),
			{Name: "deploy_steps", Since: v1_5, Type: TypeArray, Policy: RefuseAboveCap}}},
		Method{Name: "do_node_tear_down", Since: v1_0, Args: []Arg{nodeID}},
		Method{Name: "do_node_clean", Since: v1_0, Args: []Arg{nodeID, req("clean_steps", TypeArray),
			{Name: "disable_ramdisk", Since: v1_5, Type: TypeBoolean, Policy: RefuseAboveCap}}},
		// unhold (1.6) resumes a node held by a service step named hold.
		Method{Name: "do_provisioning_action", Since: v1_0, Args: []Arg{nodeID,
			{Name: "action", Since: v1_0, Type: TypeString, Required: true, Values: map[string]version.Version{"unhold": v1_6}}}},
		Method{Name: "inspect_hardware", Since: v1_0, Args: []Arg{nodeID}},
		Method{Name: "validate_driver_interfaces", Since: v1_0, Args: []Arg{nodeID}},
		Method{Name: "get_node_vendor_passthru_methods", Since: v1_0, Args: []Arg{nodeID}},
		Method{Name: "vendor_passthru", Since: v1_0, Args: []Arg{nodeID, req("driver_method", TypeString), req("http_method", TypeString), opt("info", TypeObject)}},
		Method{Name: "get_driver_properties", Since: v1_0, Args: []Arg{req("driver_name", TypeString)}},
		Method{Name: "create_port", Since: v1_0, Args: []Arg{req("port", TypePort)}},
		Method{Name: "update_port", Since: v1_0, Args: []Arg{req("port", TypePort)}},
		Method{Name: "destroy_port", Since: v1_0, Args: []Arg{req("port", TypePort)}},
		Method{Name: "update_portgroup", Since: v1_0, Args: []Arg{req("portgroup", TypePortgroup)}},
		Method{Name: "destroy_portgroup", Since: v1_0, Args: []Arg{req("portgroup", TypePortgroup)}},
		// agent_token_sha256 is the digest of the agent's token: the REST API
		// checks the token itself too, so an older conductor that cannot
		// check it is sent the heartbeat without (OmitAboveCap).
		Method{Name: "heartbeat", Since: v1_0, Args: []Arg{nodeID, req("callback_url", TypeString), opt("agent_version", TypeString),
			{Name: "agent_token_sha256", Since: v1_4, Type: TypeString},
			{Name: "agent_verify_ca", Since: v1_5, Type: TypeString}, {Name: "agent_status", Since: v1_5, Type: TypeString},
			{Name: "agent_status_message", Since: v1_5, Type: TypeString}}},
		Method{Name: "vif_list", Since: v1_2, Args: []Arg{reqAt(v1_2, "node_id", TypeString)}},
		Method{Name: "vif_attach", Since: v1_2, Args: []Arg{reqAt(v1_2, "node_id", TypeString), reqAt(v1_2, "vif_info", TypeObject)}},
		Method{Name: "vif_detach", Since: v1_2, Args: []Arg{reqAt(v1_2, "node_id", TypeString), reqAt(v1_2, "vif_id", TypeString)}},
		Method{Name: "inject_nmi", Since: v1_3, Args: []Arg{reqAt(v1_3, "node_id", TypeString)}},
		Method{Name: "get_node_with_token", Since: v1_4, Args: []Arg{reqAt(v1_4, "node_id", TypeString)}},
		Method{Name: "continue_inspection", Since: v1_5, Args: []Arg{reqAt(v1_5, "node_id", TypeString),
			reqAt(v1_5, "inventory", TypeObject), reqAt(v1_5, "plugin_data", TypeObject)}},
		Method{Name: "update_volume_connector", Since: v1_5, Args: []Arg{reqAt(v1_5, "connector", TypeVolumeConnector)}},
		Method{Name: "destroy_volume_connector", Since: v1_5, Args: []Arg{reqAt(v1_5, "connector", TypeVolumeConnector)}},
		Method{Name: "update_volume_target", Since: v1_5, Args: []Arg{reqAt(v1_5, "target", TypeVolumeTarget)}},
		Method{Name: "destroy_volume_target", Since: v1_5, Args: []Arg{reqAt(v1_5, "target", TypeVolumeTarget)}},
		Method{Name: "do_node_rescue", Since: v1_5, Args: []Arg{reqAt(v1_5, "node_id", TypeString), reqAt(v1_5, "rescue_password", TypeString)}},
		Method{Name: "do_node_unrescue", Since: v1_5, Args: []Arg{reqAt(v1_5, "node_id", TypeString)}},
		// traits absent in remove_node_traits removes every trait, as
		// Ironic's traits=None.
		Method{Name: "add_node_traits", Since: v1_5, Args: []Arg{reqAt(v1_5, "node_id", TypeString),
			reqAt(v1_5, "traits", TypeArray), {Name: "replace", Since: v1_5, Type: TypeBoolean}}},
		Method{Name: "remove_node_traits", Since: v1_5, Args: []Arg{reqAt(v1_5, "node_id", TypeString),
			{Name: "traits", Since: v1_5, Type: TypeArray}}},
		// Management interface version 2 (REST API 1.63, 1.76, 1.89, 1.93).
		Method{Name: "change_node_boot_mode", Since: v1_5, Args: []Arg{reqAt(v1_5, "node_id", TypeString), reqAt(v1_5, "new_state", TypeString)}},
		Method{Name: "change_node_secure_boot", Since: v1_5, Args: []Arg{reqAt(v1_5, "node_id", TypeString), reqAt(v1_5, "new_state", TypeBoolean)}},
		Method{Name: "get_supported_indicators", Since: v1_5, Args: []Arg{reqAt(v1_5, "node_id", TypeString)}},
		Method{Name: "get_indicator_state", Since: v1_5, Args: []Arg{reqAt(v1_5, "node_id", TypeString),
			reqAt(v1_5, "component", TypeString), reqAt(v1_5, "indicator", TypeString)}},
		Method{Name: "set_indicator_state", Since: v1_5, Args: []Arg{reqAt(v1_5, "node_id", TypeString),
			reqAt(v1_5, "component", TypeString), reqAt(v1_5, "indicator", TypeString), reqAt(v1_5, "state", TypeString)}},
		Method{Name: "get_virtual_media", Since: v1_5, Args: []Arg{reqAt(v1_5, "node_id", TypeString)}},
		Method{Name: "attach_virtual_media", Since: v1_5, Args: []Arg{reqAt(v1_5, "node_id", TypeString),
			reqAt(v1_5, "device_type", TypeString), reqAt(v1_5, "image_url", TypeString), {Name: "image_download_source", Since: v1_5, Type: TypeString}}},
		Method{Name: "detach_virtual_media", Since: v1_5, Args: []Arg{reqAt(v1_5, "node_id", TypeString), {Name: "device_types", Since: v1_5, Type: TypeArray}}},
		Method{Name: "create_allocation", Since: v1_5, Args: []Arg{reqAt(v1_5, "allocation", TypeAllocation)}},
		Method{Name: "destroy_allocation", Since: v1_5, Args: []Arg{reqAt(v1_5, "allocation", TypeAllocation)}},
		// do_node_service is Ironic's servicing (REST API 1.87);
		// disable_ramdisk is API 1.108's.
		// A service step named after a reserved step (hold, wait,
		// power_on, power_off, reboot) needs 1.6: a 1.5 conductor would
		// refuse it as a step the node does not offer.
		Method{Name: "do_node_service", Since: v1_5, Args: []Arg{reqAt(v1_5, "node_id", TypeString),
			{Name: "service_steps", Since: v1_5, Type: TypeArray, Required: true, ValueKey: "step", Values: reservedSteps},
			{Name: "disable_ramdisk", Since: v1_5, Type: TypeBoolean}}},
		Method{Name: "set_console_mode", Since: v1_5, Args: []Arg{reqAt(v1_5, "node_id", TypeString), reqAt(v1_5, "enabled", TypeBoolean)}},
		Method{Name: "get_console_information", Since: v1_5, Args: []Arg{reqAt(v1_5, "node_id", TypeString)}},
	)
	if err != nil {
		panic(err) // the table is code; TestConductorMethodsValid catches this
	}
	return t
}
