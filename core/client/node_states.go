package client

import (
	"context"
	"net/http"
	"strconv"

	"github.com/rivetmetal/rivet/core/version"
)

// Power targets of PUT /v1/nodes/{node}/states/power.
const (
	PowerOn      = "power on"
	PowerOff     = "power off"
	Reboot       = "rebooting"
	SoftPowerOff = "soft power off" // 1.27
	SoftReboot   = "soft rebooting" // 1.27
)

// PowerRequest is the body of a power state change.
type PowerRequest struct {
	// Target is PowerOn, PowerOff, Reboot, SoftPowerOff or SoftReboot.
	Target string `json:"target"`
	// Timeout, in seconds, bounds how long the conductor waits for the
	// node to get there (1.27); 0 sends none.
	Timeout int `json:"timeout,omitempty"`
}

// PowerVersion is the microversion req needs: 1.27 for a soft target or
// a timeout, else 1.1.
func PowerVersion(req PowerRequest) version.Version {
	if req.Timeout != 0 || req.Target == SoftPowerOff || req.Target == SoftReboot {
		return version.New(1, 27)
	}
	return MinVersion
}

// Provision verbs of PUT /v1/nodes/{node}/states/provision. Deploy and
// Undeploy are the 1.1 spellings ("active", "deleted"); the "deploy" and
// "undeploy" aliases need API 1.73.
const (
	VerbManage   = "manage"  // 1.4
	VerbProvide  = "provide" // 1.4
	VerbDeploy   = "active"  // 1.1
	VerbUndeploy = "deleted" // 1.1
	VerbRebuild  = "rebuild" // 1.1
	VerbInspect  = "inspect" // 1.6
	VerbAbort    = "abort"   // 1.13
	VerbClean    = "clean"   // 1.15
	VerbAdopt    = "adopt"   // 1.17
	VerbService  = "service" // 1.87
)

// ProvisionRequest is the body of a provision state change.
type ProvisionRequest struct {
	// Target is the verb (VerbDeploy, VerbClean, …).
	Target string `json:"target"`
	// ConfigDrive is a config drive URL or gzipped base64 ISO (deploy, rebuild).
	ConfigDrive any `json:"configdrive,omitempty"`
	// CleanSteps are the manual clean steps; required with VerbClean.
	CleanSteps []map[string]any `json:"clean_steps,omitempty"`
	// ServiceSteps are the service steps; required with VerbService.
	ServiceSteps []map[string]any `json:"service_steps,omitempty"`
	// DisableRamdisk is disable_ramdisk (service, API 1.108); nil: not sent.
	DisableRamdisk *bool `json:"disable_ramdisk,omitempty"`
}

// SetPowerState asks for a power change; the server answers 202 and the
// conductor acts asynchronously.
func (c *Client) SetPowerState(ctx context.Context, node, target string) error {
	return c.ChangePowerState(ctx, node, PowerRequest{Target: target})
}

// ChangePowerState is SetPowerState with every argument of the request. A
// request that needs a newer microversion than the client negotiated
// fails with a *FeatureVersionError before anything is sent.
func (c *Client) ChangePowerState(ctx context.Context, node string, req PowerRequest) error {
	if err := c.Require(ctx, PowerVersion(req), powerFeature(req)); err != nil {
		return err
	}
	_, err := c.do(ctx, http.MethodPut, Nodes.itemPath(node, "states", "power"), req, nil, http.StatusAccepted)
	return err
}

// powerFeature names what of req needs API 1.27.
func powerFeature(req PowerRequest) string {
	if req.Target == SoftPowerOff || req.Target == SoftReboot {
		return "soft power (" + strconv.Quote(req.Target) + ")"
	}
	return "a power timeout"
}

// SetProvisionState asks for a provision state change (202).
func (c *Client) SetProvisionState(ctx context.Context, node string, req ProvisionRequest) error {
	_, err := c.do(ctx, http.MethodPut, Nodes.itemPath(node, "states", "provision"), req, nil, http.StatusAccepted)
	return err
}

// States returns GET /v1/nodes/{node}/states: power and provision states,
// their targets and last_error.
func (c *Client) States(ctx context.Context, node string) (Resource, error) {
	var r Resource
	if _, err := c.do(ctx, http.MethodGet, Nodes.itemPath(node, "states"), nil, &r, http.StatusOK); err != nil {
		return nil, err
	}
	return r, nil
}

// BootDevice is a node's boot device as the management interface reports it.
type BootDevice struct {
	// BootDevice is "pxe", "disk", "cdrom", "bios", "safe", or null ("").
	BootDevice string `json:"boot_device"`
	// Persistent is whether the setting survives the next boot.
	Persistent *bool `json:"persistent"`
}

// GetBootDevice returns the node's current boot device.
func (c *Client) GetBootDevice(ctx context.Context, node string) (BootDevice, error) {
	var b BootDevice
	_, err := c.do(ctx, http.MethodGet, Nodes.itemPath(node, "management", "boot_device"), nil, &b, http.StatusOK)
	return b, err
}

// SetBootDevice sets the node's boot device (204).
func (c *Client) SetBootDevice(ctx context.Context, node, device string, persistent bool) error {
	body := map[string]any{"boot_device": device, "persistent": persistent}
	_, err := c.do(ctx, http.MethodPut, Nodes.itemPath(node, "management", "boot_device"), body, nil, http.StatusNoContent, http.StatusAccepted)
	return err
}

// SetMaintenance puts the node in maintenance with an optional reason (202).
func (c *Client) SetMaintenance(ctx context.Context, node, reason string) error {
	var body map[string]any
	if reason != "" {
		body = map[string]any{"reason": reason}
	}
	_, err := c.do(ctx, http.MethodPut, Nodes.itemPath(node, "maintenance"), body, nil, http.StatusAccepted, http.StatusNoContent)
	return err
}

// UnsetMaintenance takes the node out of maintenance (202).
func (c *Client) UnsetMaintenance(ctx context.Context, node string) error {
	_, err := c.do(ctx, http.MethodDelete, Nodes.itemPath(node, "maintenance"), nil, nil, http.StatusAccepted, http.StatusNoContent)
	return err
}

// Validation is one interface's result in GET /v1/nodes/{node}/validate.
type Validation struct {
	// Result is true when valid; nil when the interface is not supported.
	Result *bool `json:"result"`
	// Reason explains a failure or why the interface is skipped.
	Reason string `json:"reason"`
}

// Validate asks the conductor to check each of the node's interfaces.
func (c *Client) Validate(ctx context.Context, node string) (map[string]Validation, error) {
	out := map[string]Validation{}
	_, err := c.do(ctx, http.MethodGet, Nodes.itemPath(node, "validate"), nil, &out, http.StatusOK)
	return out, err
}

// DriverProperties returns GET /v1/drivers/{name}/properties: each
// driver_info key with its description.
func (c *Client) DriverProperties(ctx context.Context, driver string) (map[string]string, error) {
	out := map[string]string{}
	_, err := c.do(ctx, http.MethodGet, Drivers.itemPath(driver, "properties"), nil, &out, http.StatusOK)
	return out, err
}
