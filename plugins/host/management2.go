package host

import (
	"context"
	"fmt"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv2"
)

var _ plugins.ManagementInterfaceV2 = (*Client)(nil)

// ManagementVersionError is the answer, before anything is sent, for a
// management interface version 2 call to a plugin that negotiated version
// 1 (a plugin built with an older SDK). It wraps plugins.ErrNotSupported,
// which the API answers with 400.
type ManagementVersionError struct {
	Op      string // "setting the boot mode"
	Version int    // the negotiated management version
}

func (e *ManagementVersionError) Error() string {
	return fmt.Sprintf("the driver's plugin does not support %s (management interface version %d); upgrade the plugin", e.Op, e.Version)
}

// Unwrap makes errors.Is(err, plugins.ErrNotSupported) true.
func (e *ManagementVersionError) Unwrap() error { return plugins.ErrNotSupported }

// mgmtV2 refuses op unless Configure settled on management version 2.
func (c *Client) mgmtV2(op string) error {
	if v := c.mgmtVersion.Load(); v < 2 {
		return &ManagementVersionError{Op: op, Version: int(max(v, 1))}
	}
	return nil
}

// GetBootMode implements plugins.BootModeManager.
func (c *Client) GetBootMode(ctx context.Context, node plugins.Node) (plugins.BootMode, error) {
	if err := c.mgmtV2("reading the boot mode"); err != nil {
		return "", err
	}
	req, err := nodeRequest(node)
	if err != nil {
		return "", err
	}
	resp, err := c.mgmt2.GetBootMode(ctx, req)
	if err != nil {
		return "", fromStatus(err)
	}
	return plugins.ParseBootMode(resp.GetBootMode())
}

// SetBootMode implements plugins.BootModeManager.
func (c *Client) SetBootMode(ctx context.Context, node plugins.Node, mode plugins.BootMode) error {
	if err := c.mgmtV2("setting the boot mode"); err != nil {
		return err
	}
	n, err := nodeToProto(node)
	if err != nil {
		return err
	}
	_, err = c.mgmt2.SetBootMode(ctx, &driverv2.SetBootModeRequest{Node: n, BootMode: string(mode)})
	return fromStatus(err)
}

// GetSecureBoot implements plugins.BootModeManager.
func (c *Client) GetSecureBoot(ctx context.Context, node plugins.Node) (bool, error) {
	if err := c.mgmtV2("reading the secure boot state"); err != nil {
		return false, err
	}
	req, err := nodeRequest(node)
	if err != nil {
		return false, err
	}
	resp, err := c.mgmt2.GetSecureBoot(ctx, req)
	if err != nil {
		return false, fromStatus(err)
	}
	return resp.GetEnabled(), nil
}

// SetSecureBoot implements plugins.BootModeManager.
func (c *Client) SetSecureBoot(ctx context.Context, node plugins.Node, enabled bool) error {
	if err := c.mgmtV2("setting the secure boot state"); err != nil {
		return err
	}
	n, err := nodeToProto(node)
	if err != nil {
		return err
	}
	_, err = c.mgmt2.SetSecureBoot(ctx, &driverv2.SetSecureBootRequest{Node: n, Enabled: enabled})
	return fromStatus(err)
}

// SupportedIndicators implements plugins.IndicatorManager. An indicator
// with a state this host does not know keeps the states it does.
func (c *Client) SupportedIndicators(ctx context.Context, node plugins.Node) ([]plugins.Indicator, error) {
	if err := c.mgmtV2("indicators"); err != nil {
		return nil, err
	}
	req, err := nodeRequest(node)
	if err != nil {
		return nil, err
	}
	resp, err := c.mgmt2.SupportedIndicators(ctx, req)
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]plugins.Indicator, 0, len(resp.GetIndicators()))
	for _, p := range resp.GetIndicators() {
		in := plugins.Indicator{Component: p.GetComponent(), Name: p.GetName(), Readonly: p.GetReadonly()}
		for _, s := range p.GetStates() {
			if st, err := plugins.ParseIndicatorState(s); err == nil {
				in.States = append(in.States, st)
			}
		}
		out = append(out, in)
	}
	return out, nil
}

// GetIndicatorState implements plugins.IndicatorManager.
func (c *Client) GetIndicatorState(ctx context.Context, node plugins.Node, component, name string) (plugins.IndicatorState, error) {
	if err := c.mgmtV2("indicators"); err != nil {
		return "", err
	}
	n, err := nodeToProto(node)
	if err != nil {
		return "", err
	}
	resp, err := c.mgmt2.GetIndicatorState(ctx, &driverv2.IndicatorRequest{Node: n, Component: component, Name: name})
	if err != nil {
		return "", fromStatus(err)
	}
	return plugins.ParseIndicatorState(resp.GetState())
}

// SetIndicatorState implements plugins.IndicatorManager.
func (c *Client) SetIndicatorState(ctx context.Context, node plugins.Node, component, name string, state plugins.IndicatorState) error {
	if err := c.mgmtV2("indicators"); err != nil {
		return err
	}
	n, err := nodeToProto(node)
	if err != nil {
		return err
	}
	_, err = c.mgmt2.SetIndicatorState(ctx, &driverv2.SetIndicatorStateRequest{Node: n, Component: component, Name: name, State: string(state)})
	return fromStatus(err)
}

// GetVirtualMedia implements plugins.VirtualMediaManager.
func (c *Client) GetVirtualMedia(ctx context.Context, node plugins.Node) ([]plugins.VirtualMedia, error) {
	if err := c.mgmtV2("virtual media"); err != nil {
		return nil, err
	}
	req, err := nodeRequest(node)
	if err != nil {
		return nil, err
	}
	resp, err := c.mgmt2.GetVirtualMedia(ctx, req)
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]plugins.VirtualMedia, 0, len(resp.GetMedia()))
	for _, m := range resp.GetMedia() {
		dev, _ := plugins.ParseVirtualMediaDevice(m.GetDeviceType()) // "" for one this host does not know
		out = append(out, plugins.VirtualMedia{Device: dev, MediaTypes: m.GetMediaTypes(), Inserted: m.GetInserted(), Image: m.GetImage()})
	}
	return out, nil
}

// AttachVirtualMedia implements plugins.VirtualMediaManager.
func (c *Client) AttachVirtualMedia(ctx context.Context, node plugins.Node, device plugins.VirtualMediaDevice, imageURL string) error {
	if err := c.mgmtV2("virtual media"); err != nil {
		return err
	}
	n, err := nodeToProto(node)
	if err != nil {
		return err
	}
	_, err = c.mgmt2.AttachVirtualMedia(ctx, &driverv2.AttachVirtualMediaRequest{Node: n, DeviceType: string(device), ImageUrl: imageURL})
	return fromStatus(err)
}

// DetachVirtualMedia implements plugins.VirtualMediaManager.
func (c *Client) DetachVirtualMedia(ctx context.Context, node plugins.Node, devices []plugins.VirtualMediaDevice) error {
	if err := c.mgmtV2("virtual media"); err != nil {
		return err
	}
	n, err := nodeToProto(node)
	if err != nil {
		return err
	}
	req := &driverv2.DetachVirtualMediaRequest{Node: n}
	for _, d := range devices {
		req.DeviceTypes = append(req.DeviceTypes, string(d))
	}
	_, err = c.mgmt2.DetachVirtualMedia(ctx, req)
	return fromStatus(err)
}

// management2 runs a management interface version 2 call through the
// driver: refused before anything is sent when the running plugin
// negotiated management version 1.
func management2[T any](ctx context.Context, d *Driver, op, what string, fn func(c *Client) (T, error)) (T, error) {
	return callChecked(ctx, d, plugins.InterfaceManagement, op, func(reg Registration) error {
		if v := reg.Interfaces[plugins.InterfaceManagement]; v < 2 {
			return &ManagementVersionError{Op: what, Version: v}
		}
		return nil
	}, fn)
}

var _ plugins.ManagementInterfaceV2 = (*Driver)(nil)

// GetBootMode reads the firmware boot mode (management version 2).
func (d *Driver) GetBootMode(ctx context.Context, n plugins.Node) (plugins.BootMode, error) {
	return management2(ctx, d, "get boot mode", "reading the boot mode", func(c *Client) (plugins.BootMode, error) {
		return c.GetBootMode(ctx, d.node(n))
	})
}

// SetBootMode sets the firmware boot mode (management version 2).
func (d *Driver) SetBootMode(ctx context.Context, n plugins.Node, mode plugins.BootMode) error {
	_, err := management2(ctx, d, "set boot mode", "setting the boot mode", func(c *Client) (none, error) {
		return noValue(c.SetBootMode(ctx, d.node(n), mode))
	})
	return err
}

// GetSecureBoot reads the secure boot state (management version 2).
func (d *Driver) GetSecureBoot(ctx context.Context, n plugins.Node) (bool, error) {
	return management2(ctx, d, "get secure boot", "reading the secure boot state", func(c *Client) (bool, error) {
		return c.GetSecureBoot(ctx, d.node(n))
	})
}

// SetSecureBoot sets the secure boot state (management version 2).
func (d *Driver) SetSecureBoot(ctx context.Context, n plugins.Node, enabled bool) error {
	_, err := management2(ctx, d, "set secure boot", "setting the secure boot state", func(c *Client) (none, error) {
		return noValue(c.SetSecureBoot(ctx, d.node(n), enabled))
	})
	return err
}

// SupportedIndicators lists the indicators (management version 2).
func (d *Driver) SupportedIndicators(ctx context.Context, n plugins.Node) ([]plugins.Indicator, error) {
	return management2(ctx, d, "list indicators", "indicators", func(c *Client) ([]plugins.Indicator, error) {
		return c.SupportedIndicators(ctx, d.node(n))
	})
}

// GetIndicatorState reads an indicator (management version 2).
func (d *Driver) GetIndicatorState(ctx context.Context, n plugins.Node, component, name string) (plugins.IndicatorState, error) {
	return management2(ctx, d, "get indicator state", "indicators", func(c *Client) (plugins.IndicatorState, error) {
		return c.GetIndicatorState(ctx, d.node(n), component, name)
	})
}

// SetIndicatorState sets an indicator (management version 2).
func (d *Driver) SetIndicatorState(ctx context.Context, n plugins.Node, component, name string, state plugins.IndicatorState) error {
	_, err := management2(ctx, d, "set indicator state", "indicators", func(c *Client) (none, error) {
		return noValue(c.SetIndicatorState(ctx, d.node(n), component, name, state))
	})
	return err
}

// GetVirtualMedia lists the virtual media slots (management version 2).
func (d *Driver) GetVirtualMedia(ctx context.Context, n plugins.Node) ([]plugins.VirtualMedia, error) {
	return management2(ctx, d, "get virtual media", "virtual media", func(c *Client) ([]plugins.VirtualMedia, error) {
		return c.GetVirtualMedia(ctx, d.node(n))
	})
}

// AttachVirtualMedia inserts an image (management version 2).
func (d *Driver) AttachVirtualMedia(ctx context.Context, n plugins.Node, device plugins.VirtualMediaDevice, imageURL string) error {
	_, err := management2(ctx, d, "attach virtual media", "virtual media", func(c *Client) (none, error) {
		return noValue(c.AttachVirtualMedia(ctx, d.node(n), device, imageURL))
	})
	return err
}

// DetachVirtualMedia ejects media (management version 2).
func (d *Driver) DetachVirtualMedia(ctx context.Context, n plugins.Node, devices []plugins.VirtualMediaDevice) error {
	_, err := management2(ctx, d, "detach virtual media", "virtual media", func(c *Client) (none, error) {
		return noValue(c.DetachVirtualMedia(ctx, d.node(n), devices))
	})
	return err
}
