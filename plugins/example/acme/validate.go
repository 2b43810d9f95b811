package acme

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/rivetmetal/rivet/plugins"
)

// Properties implements plugins.PropertyDeclarer: the driver_info keys the
// driver reads, as GET /v1/drivers/acme/properties lists them.
func (d *Driver) Properties() []plugins.Property {
	return []plugins.Property{
		{Name: KeyAddress, Required: true, Description: "URL of the Acme BMC's HTTP API (http:// or https://)."},
		{Name: KeyUsername, Required: true, Description: "BMC user name."},
		{Name: KeyPassword, Required: true, Description: "BMC password."},
	}
}

// Validate implements plugins.Validator: driver_info is parsed as every
// call parses it, and for power the BMC is asked for the power state with
// the node's credentials, so a wrong password or a dead BMC shows in
// GET /v1/nodes/{node}/validate.
func (d *Driver) Validate(ctx context.Context, node plugins.Node, iface plugins.Interface) error {
	if _, err := parse(node.DriverInfo); err != nil {
		return fmt.Errorf("driver acme: node %s: %w", node.UUID, err)
	}
	if iface != plugins.InterfacePower {
		return nil
	}
	err := d.do(ctx, node, http.MethodGet, "/power", nil, nil)
	var invalid *plugins.InvalidDriverInfoError
	if errors.As(err, &invalid) { // do's answer to a 401
		return fmt.Errorf("driver acme: node %s: %w: %w", node.UUID, plugins.ErrCredentialsRefused, err)
	}
	if err != nil {
		return fmt.Errorf("driver acme: node %s: %w", node.UUID, err)
	}
	return nil
}
