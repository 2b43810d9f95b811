package rpc

import (
	"context"

	"github.com/rivetmetal/rivet/core/objects"
)

// Management interface version 2 (RPC 1.5). While the client is capped
// below 1.5 (pinned to release 0.2) every method fails with *CapError
// before anything is sent; the REST API answers 406.

// ChangeNodeBootMode sets the node's boot mode ("uefi", "bios") in the
// background under its lease (REST API 1.76); the result is the node's
// boot_mode or its last_error. An invalid mode is InvalidParameterValue
// (400), a driver without the boot mode UnsupportedDriverExtension (400).
func (c ConductorAPI) ChangeNodeBootMode(ctx context.Context, n *objects.Node, mode string) error {
	_, err := c.call(ctx, n, "change_node_boot_mode", map[string]any{"node_id": n.UUID, "new_state": mode})
	return err
}

// ChangeNodeSecureBoot enables or disables UEFI secure boot in the
// background, as ChangeNodeBootMode (REST API 1.76).
func (c ConductorAPI) ChangeNodeSecureBoot(ctx context.Context, n *objects.Node, on bool) error {
	_, err := c.call(ctx, n, "change_node_secure_boot", map[string]any{"node_id": n.UUID, "new_state": on})
	return err
}

// IndicatorInfo describes one indicator in GetSupportedIndicators' answer.
type IndicatorInfo struct {
	Readonly bool     `json:"readonly"`
	States   []string `json:"states"`
}

// GetSupportedIndicators lists the node's indicators by component and
// name (REST API 1.63).
func (c ConductorAPI) GetSupportedIndicators(ctx context.Context, n *objects.Node) (map[string]map[string]IndicatorInfo, error) {
	var out map[string]map[string]IndicatorInfo
	reply, err := c.call(ctx, n, "get_supported_indicators", map[string]any{"node_id": n.UUID})
	if err == nil {
		err = reply.Decode(&out)
	}
	return out, err
}

// GetIndicatorState reads one indicator: "ON", "OFF", "BLINKING" or
// "UNKNOWN" (REST API 1.63).
func (c ConductorAPI) GetIndicatorState(ctx context.Context, n *objects.Node, component, indicator string) (string, error) {
	var st string
	reply, err := c.call(ctx, n, "get_indicator_state", map[string]any{"node_id": n.UUID, "component": component, "indicator": indicator})
	if err == nil {
		err = reply.Decode(&st)
	}
	return st, err
}

// SetIndicatorState sets one indicator under the node's lease,
// synchronously (REST API 1.63).
func (c ConductorAPI) SetIndicatorState(ctx context.Context, n *objects.Node, component, indicator, state string) error {
	_, err := c.call(ctx, n, "set_indicator_state", map[string]any{"node_id": n.UUID, "component": component, "indicator": indicator, "state": state})
	return err
}

// VirtualMedia is one virtual media slot in GetVirtualMedia's answer, with
// Ironic's keys (media_types, inserted, image) and the device type.
type VirtualMedia struct {
	DeviceType string   `json:"device_type,omitempty"`
	MediaTypes []string `json:"media_types"`
	Inserted   bool     `json:"inserted"`
	Image      string   `json:"image"`
}

// GetVirtualMedia lists the node's virtual media slots (REST API 1.93).
func (c ConductorAPI) GetVirtualMedia(ctx context.Context, n *objects.Node) ([]VirtualMedia, error) {
	var out []VirtualMedia
	reply, err := c.call(ctx, n, "get_virtual_media", map[string]any{"node_id": n.UUID})
	if err == nil {
		err = reply.Decode(&out)
	}
	return out, err
}

// AttachVirtualMedia inserts image_url in a slot of deviceType in the
// background under the node's lease (REST API 1.89); source is Ironic's
// image_download_source ("" for its default, local).
func (c ConductorAPI) AttachVirtualMedia(ctx context.Context, n *objects.Node, deviceType, imageURL, source string) error {
	args := map[string]any{"node_id": n.UUID, "device_type": deviceType, "image_url": imageURL}
	if source != "" {
		args["image_download_source"] = source
	}
	_, err := c.call(ctx, n, "attach_virtual_media", args)
	return err
}

// DetachVirtualMedia ejects the media of deviceTypes (all when empty) in
// the background under the node's lease (REST API 1.89).
func (c ConductorAPI) DetachVirtualMedia(ctx context.Context, n *objects.Node, deviceTypes []string) error {
	args := map[string]any{"node_id": n.UUID}
	if len(deviceTypes) > 0 {
		args["device_types"] = deviceTypes
	}
	_, err := c.call(ctx, n, "detach_virtual_media", args)
	return err
}
