package rpc

import (
	"context"
	"fmt"

	"github.com/rivetmetal/rivet/core/objects"
)

// ConductorAPI is the typed client of the conductor RPC API the REST API
// uses: it routes each call to the conductor that owns the node and states
// each method's contract. Methods newer than the cap fail with *CapError
// before anything is sent (the REST API answers 406).
//
// Contract for the conductor side (core/conductor implements the server):
//   - Node-changing methods take the node's lease; a held lease is a
//     NodeLocked error (409) with Ironic's message.
//   - Long work (power, deploy, tear down, clean, inspect, provisioning
//     verbs) is validated and started before the call returns; the REST API
//     answers 202 and clients poll the node.
//   - Errors are Classed (class + HTTP code) so the REST API can map them.
type ConductorAPI struct {
	Client *Client
	Router *Router
}

// target is where a node's calls go.
func target(n *objects.Node) Target {
	return Target{UUID: n.UUID, Driver: n.Driver, Group: n.ConductorGroup}
}

func (c ConductorAPI) call(ctx context.Context, n *objects.Node, method string, args map[string]any) (Reply, error) {
	return c.Client.CallNode(ctx, c.Router, target(n), method, args)
}

// CreateNode validates the driver and interfaces on a conductor that has the
// node's hardware type and stores the node; it returns the stored node. A
// field set that the conductor's effective release cannot store (an API
// ahead of a pinned conductor) is refused with 406 before anything is
// written.
func (c ConductorAPI) CreateNode(ctx context.Context, n *objects.Node) (*objects.Node, error) {
	return objectReply[*objects.Node](c.call(ctx, n, "create_node", map[string]any{"node": n}))
}

// UpdateNode saves the node's changed fields under its lease, validating a
// driver or interface change; it returns the stored node. A change the
// conductor's effective release cannot store is refused with 406, as in
// CreateNode.
func (c ConductorAPI) UpdateNode(ctx context.Context, n *objects.Node) (*objects.Node, error) {
	return objectReply[*objects.Node](c.call(ctx, n, "update_node", map[string]any{"node": n}))
}

// DestroyNode deletes the node (and its ports and portgroups) if its state
// allows it (states.DeleteAllowed), else an InvalidState error (409).
func (c ConductorAPI) DestroyNode(ctx context.Context, n *objects.Node) error {
	_, err := c.call(ctx, n, "destroy_node", map[string]any{"node_id": n.UUID})
	return err
}

// ChangeNodePowerState starts a power change to "power on", "power off",
// "rebooting" or (RPC 1.1) "soft power off" or "soft rebooting", waiting at
// most timeout seconds (RPC 1.1; 0: none given) for the node to get there.
// The conductor refuses synchronously, with InvalidParameterValue (400), a
// target or timeout the node's driver cannot do (a driver plugin that
// negotiated power interface version 1 has neither soft power nor
// timeouts); otherwise it sets target_power_state to the final state
// ("power on" for the reboots) and the work runs in the background;
// failures land in last_error. Soft actions without a timeout wait
// [conductor] soft_power_off_timeout. Capped below 1.1, the soft targets
// and a timeout are refused with *CapError (406) before anything is sent.
func (c ConductorAPI) ChangeNodePowerState(ctx context.Context, n *objects.Node, state string, timeout int) error {
	args := map[string]any{"node_id": n.UUID, "new_state": state}
	if timeout != 0 {
		args["timeout"] = timeout
	}
	_, err := c.call(ctx, n, "change_node_power_state", args)
	return err
}

// BootDevice is a node's boot device as the management interface reports it.
type BootDevice struct {
	BootDevice *string `json:"boot_device"`
	Persistent *bool   `json:"persistent"`
}

// GetBootDevice asks the driver for the current boot device.
func (c ConductorAPI) GetBootDevice(ctx context.Context, n *objects.Node) (BootDevice, error) {
	var bd BootDevice
	reply, err := c.call(ctx, n, "get_boot_device", map[string]any{"node_id": n.UUID})
	if err == nil {
		err = reply.Decode(&bd)
	}
	return bd, err
}

// SetBootDevice sets the boot device ("pxe", "disk", "cdrom", "bios").
func (c ConductorAPI) SetBootDevice(ctx context.Context, n *objects.Node, device string, persistent bool) error {
	_, err := c.call(ctx, n, "set_boot_device", map[string]any{"node_id": n.UUID, "device": device, "persistent": persistent})
	return err
}

// GetSupportedBootDevices lists the devices SetBootDevice accepts.
func (c ConductorAPI) GetSupportedBootDevices(ctx context.Context, n *objects.Node) ([]string, error) {
	var devs []string
	reply, err := c.call(ctx, n, "get_supported_boot_devices", map[string]any{"node_id": n.UUID})
	if err == nil {
		err = reply.Decode(&devs)
	}
	return devs, err
}

// DoNodeDeploy starts a deploy (or a rebuild) from available, deploy
// failed, active or error. deploySteps (at most one list; REST API 1.69)
// are the user's deploy steps, sent as RPC 1.5's deploy_steps: capped
// below, the call fails with *CapError before anything is sent.
func (c ConductorAPI) DoNodeDeploy(ctx context.Context, n *objects.Node, rebuild bool, configdrive any, deploySteps ...[]map[string]any) error {
	args := map[string]any{"node_id": n.UUID, "rebuild": rebuild, "configdrive": configdrive}
	if len(deploySteps) > 0 && deploySteps[0] != nil {
		args["deploy_steps"] = deploySteps[0]
	}
	_, err := c.call(ctx, n, "do_node_deploy", args)
	return err
}

// DoNodeTearDown starts tearing down an active (or failed) node.
func (c ConductorAPI) DoNodeTearDown(ctx context.Context, n *objects.Node) error {
	_, err := c.call(ctx, n, "do_node_tear_down", map[string]any{"node_id": n.UUID})
	return err
}

// DoNodeClean starts manual cleaning of a manageable node with the steps.
// disableRamdisk (at most one; REST API 1.70) runs them without booting
// the agent: sent as RPC 1.5's disable_ramdisk only when true, so capped
// below, such a call fails with *CapError before anything is sent.
func (c ConductorAPI) DoNodeClean(ctx context.Context, n *objects.Node, steps []map[string]any, disableRamdisk ...bool) error {
	args := map[string]any{"node_id": n.UUID, "clean_steps": steps}
	if len(disableRamdisk) > 0 && disableRamdisk[0] {
		args["disable_ramdisk"] = true
	}
	_, err := c.call(ctx, n, "do_node_clean", args)
	return err
}

// DoProvisioningAction runs a verb without arguments: manage, provide,
// abort, adopt, unhold (RPC 1.6: capped below, *CapError).
func (c ConductorAPI) DoProvisioningAction(ctx context.Context, n *objects.Node, action string) error {
	_, err := c.call(ctx, n, "do_provisioning_action", map[string]any{"node_id": n.UUID, "action": action})
	return err
}

// InspectHardware starts inspection of a manageable (or inspect failed) node.
func (c ConductorAPI) InspectHardware(ctx context.Context, n *objects.Node) error {
	_, err := c.call(ctx, n, "inspect_hardware", map[string]any{"node_id": n.UUID})
	return err
}

// InterfaceValidation is one interface's result in ValidateDriverInterfaces.
type InterfaceValidation struct {
	Result bool    `json:"result"`
	Reason *string `json:"reason,omitempty"`
}

// ValidateDriverInterfaces validates each interface of the node's driver
// (Ironic's GET /v1/nodes/{id}/validate body).
func (c ConductorAPI) ValidateDriverInterfaces(ctx context.Context, n *objects.Node) (map[string]InterfaceValidation, error) {
	out := map[string]InterfaceValidation{}
	reply, err := c.call(ctx, n, "validate_driver_interfaces", map[string]any{"node_id": n.UUID})
	if err == nil {
		err = reply.Decode(&out)
	}
	return out, err
}

// GetNodeVendorPassthruMethods lists the driver's vendor methods.
func (c ConductorAPI) GetNodeVendorPassthruMethods(ctx context.Context, n *objects.Node) (map[string]any, error) {
	out := map[string]any{}
	reply, err := c.call(ctx, n, "get_node_vendor_passthru_methods", map[string]any{"node_id": n.UUID})
	if err == nil {
		err = reply.Decode(&out)
	}
	return out, err
}

// CreatePort validates and stores a port of n; it returns the stored port.
func (c ConductorAPI) CreatePort(ctx context.Context, n *objects.Node, p *objects.Port) (*objects.Port, error) {
	return objectReply[*objects.Port](c.call(ctx, n, "create_port", map[string]any{"port": p}))
}

// UpdatePort saves a port's changes under its node's lease.
func (c ConductorAPI) UpdatePort(ctx context.Context, n *objects.Node, p *objects.Port) (*objects.Port, error) {
	return objectReply[*objects.Port](c.call(ctx, n, "update_port", map[string]any{"port": p}))
}

// DestroyPort deletes a port under its node's lease.
func (c ConductorAPI) DestroyPort(ctx context.Context, n *objects.Node, p *objects.Port) error {
	_, err := c.call(ctx, n, "destroy_port", map[string]any{"port": p})
	return err
}

// UpdatePortgroup saves a portgroup's changes under its node's lease.
func (c ConductorAPI) UpdatePortgroup(ctx context.Context, n *objects.Node, pg *objects.Portgroup) (*objects.Portgroup, error) {
	return objectReply[*objects.Portgroup](c.call(ctx, n, "update_portgroup", map[string]any{"portgroup": pg}))
}

// DestroyPortgroup deletes a portgroup under its node's lease.
func (c ConductorAPI) DestroyPortgroup(ctx context.Context, n *objects.Node, pg *objects.Portgroup) error {
	_, err := c.call(ctx, n, "destroy_portgroup", map[string]any{"portgroup": pg})
	return err
}

// HeartbeatExtra holds a heartbeat's fields newer than RPC 1.4 (all RPC
// 1.5, REST API 1.68 and 1.72); "" means not sent.
type HeartbeatExtra struct {
	// VerifyCA is the PEM certificate the agent serves TLS with
	// (agent_verify_ca, REST API 1.68): the conductor verifies the agent
	// with it.
	VerifyCA string
	// Status and StatusMessage are agent_status ("start", "end",
	// "error") and agent_status_message (REST API 1.72).
	Status, StatusMessage string
}

// Heartbeat passes a ramdisk agent's heartbeat to the node's conductor
// with the digest of the token the agent presented (agenttoken.Digest; RPC
// 1.4, omitted below): the token itself does not travel. A conductor at
// 1.4 refuses, with InvalidParameterValue (400) and no change, a digest
// that is not its node's token's; the caller checks the token as well, for
// conductors capped below. extra (at most one) carries the RPC 1.5 fields,
// omitted while capped below (the REST API serves the versions that send
// them only when the cap allows).
func (c ConductorAPI) Heartbeat(ctx context.Context, n *objects.Node, callbackURL, agentVersion, tokenDigest string, extra ...HeartbeatExtra) error {
	args := map[string]any{"node_id": n.UUID, "callback_url": callbackURL,
		"agent_version": agentVersion, "agent_token_sha256": tokenDigest}
	for _, x := range extra {
		for k, v := range map[string]string{"agent_verify_ca": x.VerifyCA, "agent_status": x.Status, "agent_status_message": x.StatusMessage} {
			if v != "" {
				args[k] = v
			}
		}
	}
	_, err := c.call(ctx, n, "heartbeat", args)
	return err
}

// GetNodeWithToken issues the node's agent token (RPC 1.4, Ironic's
// get_node_with_token): a node in a state that expects an agent and
// without a token gets one, and is returned with it in
// driver_internal_info; one that has a token is returned with it masked;
// one in another state without. Capped below 1.4, *CapError before
// anything is sent: no token can be issued.
func (c ConductorAPI) GetNodeWithToken(ctx context.Context, n *objects.Node) (*objects.Node, error) {
	return objectReply[*objects.Node](c.call(ctx, n, "get_node_with_token", map[string]any{"node_id": n.UUID}))
}

// VIF is one virtual network interface attached to a node (an entry of
// Ironic's GET /v1/nodes/{id}/vifs).
type VIF struct {
	ID string `json:"id"`
}

// VIFList lists the VIFs attached to the node's ports and portgroups; it
// takes no lease (RPC 1.2).
func (c ConductorAPI) VIFList(ctx context.Context, n *objects.Node) ([]VIF, error) {
	var vifs []VIF
	reply, err := c.call(ctx, n, "vif_list", map[string]any{"node_id": n.UUID})
	if err == nil {
		err = reply.Decode(&vifs)
	}
	return vifs, err
}

// VIFAttach attaches the VIF info["id"] to a free port or portgroup of the
// node under its lease: VifAlreadyAttached (409) when it is attached
// already, NoFreePhysicalPorts (400) when no port is free (RPC 1.2). The
// other keys of info travel as Ironic's vif_info does.
func (c ConductorAPI) VIFAttach(ctx context.Context, n *objects.Node, info map[string]any) error {
	_, err := c.call(ctx, n, "vif_attach", map[string]any{"node_id": n.UUID, "vif_info": info})
	return err
}

// VIFDetach detaches a VIF from the node under its lease; VifNotAttached
// (400) when it is not attached to it (RPC 1.2).
func (c ConductorAPI) VIFDetach(ctx context.Context, n *objects.Node, vifID string) error {
	_, err := c.call(ctx, n, "vif_detach", map[string]any{"node_id": n.UUID, "vif_id": vifID})
	return err
}

// InjectNMI sends a non-maskable interrupt to the node under its lease,
// synchronously; a driver without the nmi capability is
// UnsupportedDriverExtension (400) (RPC 1.3).
func (c ConductorAPI) InjectNMI(ctx context.Context, n *objects.Node) error {
	_, err := c.call(ctx, n, "inject_nmi", map[string]any{"node_id": n.UUID})
	return err
}

// DoNodeRescue starts rescuing an active node with the node's rescue
// interface, which boots a rescue ramdisk with rescue_password for its
// user (RPC 1.5); a node whose rescue interface does nothing is
// InstanceRescueFailure (400).
func (c ConductorAPI) DoNodeRescue(ctx context.Context, n *objects.Node, password string) error {
	_, err := c.call(ctx, n, "do_node_rescue", map[string]any{"node_id": n.UUID, "rescue_password": password})
	return err
}

// DoNodeService starts servicing an active (or service failed) node: the
// steps run on the node's driver interfaces and the node returns to active
// (RPC 1.5, Ironic's do_node_service). disableRamdisk is Ironic's
// disable_ramdisk (REST API 1.108): the steps must not need the agent.
// The conductor refuses synchronously a node in maintenance, a step no
// interface of the node offers for servicing, and a driver that fails
// power validation; otherwise the node is in servicing before the call
// returns. Capped below 1.5, *CapError (406) before anything is sent;
// so are steps naming a reserved step (hold, wait, power_on, power_off,
// reboot: values of service_steps new in RPC 1.6) capped below 1.6.
func (c ConductorAPI) DoNodeService(ctx context.Context, n *objects.Node, service []map[string]any, disableRamdisk bool) error {
	args := map[string]any{"node_id": n.UUID, "service_steps": service}
	if disableRamdisk {
		args["disable_ramdisk"] = true
	}
	_, err := c.call(ctx, n, "do_node_service", args)
	return err
}

// DoNodeUnrescue starts returning a rescued node to active (RPC 1.5).
func (c ConductorAPI) DoNodeUnrescue(ctx context.Context, n *objects.Node) error {
	_, err := c.call(ctx, n, "do_node_unrescue", map[string]any{"node_id": n.UUID})
	return err
}

// GetDriverProperties returns the driver_info keys a hardware type takes,
// with their descriptions, from any conductor that has it.
func (c ConductorAPI) GetDriverProperties(ctx context.Context, driver string) (map[string]string, error) {
	out := map[string]string{}
	reply, err := c.Client.CallNode(ctx, c.Router, Target{UUID: driver, Driver: driver}, "get_driver_properties", map[string]any{"driver_name": driver})
	if err == nil {
		err = reply.Decode(&out)
	}
	return out, err
}

func objectReply[T objects.Object](reply Reply, err error) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	obj, err := reply.Object()
	if err != nil {
		return zero, err
	}
	out, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("rpc: conductor replied with a %T, want a %T", obj, zero)
	}
	return out, nil
}

// ContinueInspection hands the inspection data a ramdisk agent posted to
// the node's conductor (RPC 1.5, Ironic's continue_inspection): under the
// node's lease it is processed, stored and the node leaves "inspect wait".
// Capped below 1.5, *CapError before anything is sent.
func (c ConductorAPI) ContinueInspection(ctx context.Context, n *objects.Node, inventory, pluginData map[string]any) error {
	_, err := c.call(ctx, n, "continue_inspection", map[string]any{"node_id": n.UUID, "inventory": inventory, "plugin_data": pluginData})
	return err
}
