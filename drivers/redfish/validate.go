package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/rivetmetal/rivet/plugins"
)

var (
	_ plugins.Validator        = (*Driver)(nil)
	_ plugins.PropertyDeclarer = (*Driver)(nil)
)

// Properties implements plugins.PropertyDeclarer: the driver_info keys this
// driver reads. The descriptions are Ironic's where Ironic has the key,
// naming Rivet's options.
func (d *Driver) Properties() []plugins.Property {
	return []plugins.Property{
		{Name: KeyAddress, Required: true, Description: "The URL address to the Redfish controller. It must include the authority portion of the URL, and can optionally include the scheme. If the scheme is missing, https is assumed. For example: https://mgmt.vendor.com. It must not carry credentials (use redfish_username and redfish_password)."},
		{Name: KeySystemID, Description: "The canonical path to the ComputerSystem resource that the driver will interact with. It should include the root service, version and the unique resource path to a ComputerSystem within the same authority as the redfish_address property. For example: /redfish/v1/Systems/1. This property is only required if target BMC manages more than one ComputerSystem. Otherwise it is optional."},
		{Name: KeyUsername, Description: "User account with admin/server-profile access privilege. Although this property is not mandatory it's highly recommended to set a username."},
		{Name: KeyPassword, Description: "User account password. Although this property is not mandatory, it's highly recommended to set a password."},
		{Name: KeyVerifyCA, Description: "Either a Boolean value or the path of a CA bundle file (PEM) on the conductor host. If set to True the driver will verify the host certificates; if False the driver will ignore verifying the SSL certificate. If it's a path the driver will use the certificates in that file. Defaults to [redfish] verify_ca_default (True)."},
		{Name: KeyAuthType, Description: "Redfish HTTP client authentication method. Can be \"basic\", \"session\" or \"auto\". The \"auto\" mode first tries \"session\" and falls back to \"basic\" if session authentication is not supported by the Redfish BMC. Defaults to \"auto\", or \"basic\" when [redfish] use_sessions is false."},
		{Name: KeyVirtualMediaLocation, Description: "Where the virtual media slots are: \"system\", \"manager\" or \"auto\" (default: ask the BMC)."},
		{Name: KeyPowerStateChangeTimeout, Description: "Seconds to wait for a power state change; defaults to [redfish] power_state_change_timeout."},
	}
}

// Validate implements plugins.Validator. driver_info is parsed and
// type-checked by the same function every call uses (parseInfo); for power
// and management the node's system is read from the BMC with the node's
// credentials, which tells "unreachable" (plugins.ErrBMCUnreachable),
// "refused credentials" (plugins.ErrCredentialsRefused) and "wrong system
// id" (plugins.ErrWrongSystemID: no such system, or several and none
// named) apart; for deploy, instance_info's boot_iso is checked.
func (d *Driver) Validate(ctx context.Context, node plugins.Node, iface plugins.Interface) error {
	if _, err := parseInfo(node.DriverInfo, d.opts); err != nil {
		return fmt.Errorf("driver redfish: node %s: %w", node.UUID, err)
	}
	switch iface {
	case plugins.InterfacePower, plugins.InterfaceManagement:
		err := d.call(ctx, node, "validate", func(t target) error {
			_, err := t.system()
			return err
		})
		return validationError(err)
	case plugins.InterfaceDeploy:
		_, err := bootISO(node)
		return err
	}
	return nil
}

// validationError adds to a call's error the SDK's validation sentinel
// its answer means.
func validationError(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	var invalid *plugins.InvalidDriverInfoError
	switch {
	case errors.As(err, &e) && (e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden):
		return fmt.Errorf("%w: %w", plugins.ErrCredentialsRefused, err)
	case errors.As(err, &e) && e.Status == http.StatusNotFound:
		return fmt.Errorf("%w: the BMC has no such system (check %s): %w", plugins.ErrWrongSystemID, KeySystemID, err)
	case errors.As(err, &invalid) && len(invalid.Missing) == 1 && invalid.Missing[0] == KeySystemID:
		return fmt.Errorf("%w: %s is required: %w", plugins.ErrWrongSystemID, KeySystemID, err)
	}
	return err
}
