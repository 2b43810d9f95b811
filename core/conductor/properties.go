package conductor

// driverProperties are the driver_info keys each hardware type takes, with
// Ironic's descriptions (get_driver_properties). They are served, and the
// keys of requiredKeys checked by validate_driver_interfaces, only for a
// driver that declares no properties and has no Validate of its own (a
// plugin built with an SDK older than the validate and properties
// capabilities); the built-in drivers declare theirs.
var driverProperties = map[string]map[string]string{
	"fake-hardware": {},
	"ipmi": {
		"ipmi_address":      "IP address or hostname of the node. Required.",
		"ipmi_username":     "username; default is NULL user. Optional.",
		"ipmi_password":     "password. Optional.",
		"ipmi_port":         "remote IPMI RMCP port. Optional.",
		"ipmi_cipher_suite": "IPMI cipher suite to use; defaults to [ipmi] cipher_suite. Optional.",
		"ipmi_priv_level":   "privilege level; default is ADMINISTRATOR. One of ADMINISTRATOR, CALLBACK, OPERATOR, USER. Optional.",
	},
	"redfish": {
		"redfish_address":   "The URL address to the Redfish controller. It must include the authority portion of the URL, and can optionally include the scheme. If the scheme is missing, https is assumed. For example: https://mgmt.vendor.com. This is required.",
		"redfish_system_id": "The canonical path to the ComputerSystem resource that the driver will interact with. It should include the root service, version and the unique resource path to a ComputerSystem within the same authority as the redfish_address property. For example: /redfish/v1/Systems/1. This property is only required if target BMC manages more than one ComputerSystem. Otherwise it is optional.",
		"redfish_username":  "User account with admin/server-profile access privilege. Although this property is not mandatory it's highly recommended to set a username. Optional",
		"redfish_password":  "User account password. Although this property is not mandatory, it's highly recommended to set a password. Optional",
		"redfish_verify_ca": "Either a Boolean value or the path of a CA bundle file (PEM) on the conductor host. If set to True the driver will verify the host certificates; if False the driver will ignore verifying the SSL certificate. If it's a path the driver will use the certificates in that file. Defaults to [redfish] verify_ca_default (True). Optional",
		"redfish_auth_type": "Redfish HTTP client authentication method. Can be \"basic\", \"session\" or \"auto\". The \"auto\" mode first tries \"session\" and falls back to \"basic\" if session authentication is not supported by the Redfish BMC. Default is \"auto\", or \"basic\" when the conductor's [redfish] use_sessions is false. Optional",
	},
}

// requiredKeys lists the driver_info keys a hardware type cannot work
// without.
var requiredKeys = map[string][]string{
	"ipmi":    {"ipmi_address"},
	"redfish": {"redfish_address"},
}
