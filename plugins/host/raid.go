package host

import (
	"context"
	"fmt"

	"github.com/rivetmetal/rivet/plugins"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv2"
)

var (
	_ plugins.RAIDInterface = (*Client)(nil)
	_ plugins.RAIDInterface = (*Driver)(nil)
)

// raidClient returns the RAID service, or ErrNotSupported below protocol 2
// (a plugin built before the raid interface never advertises it, so the
// host never gets here with one; this guards a direct use of Client).
func (c *Client) raidClient() (driverv2.RAIDClient, error) {
	if c.raid == nil {
		return nil, fmt.Errorf("raid needs plugin protocol %d, this connection speaks %d: %w",
			plugins.InterfaceProtocol(plugins.InterfaceRAID, 1), c.protocol, plugins.ErrNotSupported)
	}
	return c.raid, nil
}

// CreateRAIDConfiguration implements plugins.RAIDInterface.
func (c *Client) CreateRAIDConfiguration(ctx context.Context, node plugins.Node, disks []plugins.LogicalDisk) ([]plugins.LogicalDisk, error) {
	rc, err := c.raidClient()
	if err != nil {
		return nil, err
	}
	n, err := nodeToProto(node)
	if err != nil {
		return nil, err
	}
	p, err := plugins.LogicalDisksToProto(disks)
	if err != nil {
		return nil, err
	}
	resp, err := rc.CreateConfiguration(ctx, &driverv2.CreateRAIDRequest{Node: n, LogicalDisks: p})
	if err != nil {
		return nil, fromStatus(err)
	}
	return plugins.LogicalDisksFromProto(resp.GetLogicalDisks()), nil
}

// DeleteRAIDConfiguration implements plugins.RAIDInterface.
func (c *Client) DeleteRAIDConfiguration(ctx context.Context, node plugins.Node) error {
	rc, err := c.raidClient()
	if err != nil {
		return err
	}
	n, err := nodeToProto(node)
	if err != nil {
		return err
	}
	_, err = rc.DeleteConfiguration(ctx, &driverv1.NodeRequest{Node: n})
	return fromStatus(err)
}

// GetRAIDConfiguration implements plugins.RAIDInterface.
func (c *Client) GetRAIDConfiguration(ctx context.Context, node plugins.Node) ([]plugins.LogicalDisk, error) {
	rc, err := c.raidClient()
	if err != nil {
		return nil, err
	}
	n, err := nodeToProto(node)
	if err != nil {
		return nil, err
	}
	resp, err := rc.GetConfiguration(ctx, &driverv1.NodeRequest{Node: n})
	if err != nil {
		return nil, fromStatus(err)
	}
	return plugins.LogicalDisksFromProto(resp.GetLogicalDisks()), nil
}

// CreateRAIDConfiguration creates logical disks; ErrNotSupported unless
// raid interface version 1 was negotiated with the running plugin.
func (d *Driver) CreateRAIDConfiguration(ctx context.Context, n plugins.Node, disks []plugins.LogicalDisk) ([]plugins.LogicalDisk, error) {
	return call(ctx, d, plugins.InterfaceRAID, "", "create RAID configuration", func(c *Client) ([]plugins.LogicalDisk, error) {
		return c.CreateRAIDConfiguration(ctx, d.node(n), disks)
	})
}

// DeleteRAIDConfiguration deletes every logical disk; ErrNotSupported
// unless raid was negotiated.
func (d *Driver) DeleteRAIDConfiguration(ctx context.Context, n plugins.Node) error {
	_, err := call(ctx, d, plugins.InterfaceRAID, "", "delete RAID configuration", func(c *Client) (none, error) {
		return noValue(c.DeleteRAIDConfiguration(ctx, d.node(n)))
	})
	return err
}

// GetRAIDConfiguration reads the logical disks; ErrNotSupported unless
// raid was negotiated.
func (d *Driver) GetRAIDConfiguration(ctx context.Context, n plugins.Node) ([]plugins.LogicalDisk, error) {
	return call(ctx, d, plugins.InterfaceRAID, "", "get RAID configuration", func(c *Client) ([]plugins.LogicalDisk, error) {
		return c.GetRAIDConfiguration(ctx, d.node(n))
	})
}
