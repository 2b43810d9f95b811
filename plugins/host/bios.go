package host

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv2"
)

// The bios and firmware interfaces (version 1, protocol 2): the Client
// reaches the plugin's BIOS and Firmware services; the Driver checks first
// that the interface was negotiated, so an older plugin answers "driver X:
// ...: interface bios not negotiated: not supported" without a round trip.

var _ interface {
	plugins.BIOSInterface
	plugins.FirmwareInterface
} = (*Client)(nil)

var _ interface {
	plugins.BIOSInterface
	plugins.FirmwareInterface
} = (*Driver)(nil)

// errNoService is what a Client below protocol 2 answers for the bios and
// firmware services.
func (c *Client) errNoService(iface plugins.Interface) error {
	return fmt.Errorf("plugin protocol %d has no %s interface (needs protocol %d): %w",
		c.protocol, iface, plugins.InterfaceProtocol(iface, 1), plugins.ErrNotSupported)
}

// GetBIOSSettings implements plugins.BIOSInterface.
func (c *Client) GetBIOSSettings(ctx context.Context, node plugins.Node) ([]plugins.BIOSSetting, error) {
	if c.bios == nil {
		return nil, c.errNoService(plugins.InterfaceBIOS)
	}
	req, err := nodeRequest(node)
	if err != nil {
		return nil, err
	}
	resp, err := c.bios.GetBIOSSettings(ctx, req)
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]plugins.BIOSSetting, 0, len(resp.GetSettings()))
	for _, s := range resp.GetSettings() {
		out = append(out, biosSettingFromProto(s))
	}
	return out, nil
}

// ApplyBIOSSettings implements plugins.BIOSInterface.
func (c *Client) ApplyBIOSSettings(ctx context.Context, node plugins.Node, settings []plugins.BIOSSettingValue) error {
	if c.bios == nil {
		return c.errNoService(plugins.InterfaceBIOS)
	}
	n, err := nodeToProto(node)
	if err != nil {
		return err
	}
	req := &driverv2.ApplyBIOSSettingsRequest{Node: n}
	for _, s := range settings {
		req.Settings = append(req.Settings, &driverv2.BIOSSettingValue{Name: s.Name, Value: s.Value})
	}
	_, err = c.bios.ApplyBIOSSettings(ctx, req)
	return fromStatus(err)
}

// FactoryResetBIOS implements plugins.BIOSInterface.
func (c *Client) FactoryResetBIOS(ctx context.Context, node plugins.Node) error {
	if c.bios == nil {
		return c.errNoService(plugins.InterfaceBIOS)
	}
	return c.nodeCall(ctx, node, c.bios.FactoryResetBIOS)
}

// ListFirmwareComponents implements plugins.FirmwareInterface.
func (c *Client) ListFirmwareComponents(ctx context.Context, node plugins.Node) ([]plugins.FirmwareComponent, error) {
	if c.firmware == nil {
		return nil, c.errNoService(plugins.InterfaceFirmware)
	}
	req, err := nodeRequest(node)
	if err != nil {
		return nil, err
	}
	resp, err := c.firmware.ListFirmwareComponents(ctx, req)
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]plugins.FirmwareComponent, 0, len(resp.GetComponents()))
	for _, fc := range resp.GetComponents() {
		out = append(out, plugins.FirmwareComponent{Component: fc.GetComponent(), CurrentVersion: fc.GetCurrentVersion()})
	}
	return out, nil
}

// UpdateFirmware implements plugins.FirmwareInterface.
func (c *Client) UpdateFirmware(ctx context.Context, node plugins.Node, updates []plugins.FirmwareUpdate) error {
	if c.firmware == nil {
		return c.errNoService(plugins.InterfaceFirmware)
	}
	n, err := nodeToProto(node)
	if err != nil {
		return err
	}
	req := &driverv2.UpdateFirmwareRequest{Node: n}
	for _, u := range updates {
		fu := &driverv2.FirmwareUpdate{Component: u.Component, Url: u.URL}
		if u.Wait > 0 {
			fu.Wait = durationpb.New(u.Wait)
		}
		req.Updates = append(req.Updates, fu)
	}
	_, err = c.firmware.UpdateFirmware(ctx, req)
	return fromStatus(err)
}

func biosSettingFromProto(s *driverv2.BIOSSetting) plugins.BIOSSetting {
	return plugins.BIOSSetting{Name: s.GetName(), Value: s.Value, AttributeType: s.GetAttributeType(),
		AllowableValues: s.GetAllowableValues(), LowerBound: s.LowerBound, UpperBound: s.UpperBound,
		MinLength: s.MinLength, MaxLength: s.MaxLength, ReadOnly: s.ReadOnly, ResetRequired: s.ResetRequired, Unique: s.Unique}
}

// GetBIOSSettings reads the node's BIOS settings; ErrNotSupported unless
// bios was negotiated.
func (d *Driver) GetBIOSSettings(ctx context.Context, n plugins.Node) ([]plugins.BIOSSetting, error) {
	return call(ctx, d, plugins.InterfaceBIOS, "", "get BIOS settings", func(c *Client) ([]plugins.BIOSSetting, error) {
		return c.GetBIOSSettings(ctx, d.node(n))
	})
}

// ApplyBIOSSettings changes BIOS settings; ErrNotSupported unless bios was
// negotiated.
func (d *Driver) ApplyBIOSSettings(ctx context.Context, n plugins.Node, settings []plugins.BIOSSettingValue) error {
	_, err := call(ctx, d, plugins.InterfaceBIOS, "", "apply BIOS settings", func(c *Client) (none, error) {
		return noValue(c.ApplyBIOSSettings(ctx, d.node(n), settings))
	})
	return err
}

// FactoryResetBIOS restores the BIOS defaults; ErrNotSupported unless bios
// was negotiated.
func (d *Driver) FactoryResetBIOS(ctx context.Context, n plugins.Node) error {
	_, err := call(ctx, d, plugins.InterfaceBIOS, "", "factory reset BIOS", func(c *Client) (none, error) {
		return noValue(c.FactoryResetBIOS(ctx, d.node(n)))
	})
	return err
}

// ListFirmwareComponents reads the node's firmware components;
// ErrNotSupported unless firmware was negotiated.
func (d *Driver) ListFirmwareComponents(ctx context.Context, n plugins.Node) ([]plugins.FirmwareComponent, error) {
	return call(ctx, d, plugins.InterfaceFirmware, "", "list firmware components", func(c *Client) ([]plugins.FirmwareComponent, error) {
		return c.ListFirmwareComponents(ctx, d.node(n))
	})
}

// UpdateFirmware flashes firmware; ErrNotSupported unless firmware was
// negotiated.
func (d *Driver) UpdateFirmware(ctx context.Context, n plugins.Node, updates []plugins.FirmwareUpdate) error {
	_, err := call(ctx, d, plugins.InterfaceFirmware, "", "update firmware", func(c *Client) (none, error) {
		return noValue(c.UpdateFirmware(ctx, d.node(n), updates))
	})
	return err
}
