package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/rivetmetal/rivet/core/version"
)

// Microversions of the node features below.
var (
	// VIFsVersion is the microversion of /v1/nodes/{node}/vifs.
	VIFsVersion = version.New(1, 28)
	// InjectNMIVersion is the microversion of .../management/inject_nmi.
	InjectNMIVersion = version.New(1, 29)
)

// gated turns the 404 a resource newer than the negotiated version gets
// into a *FeatureVersionError, so callers can tell it from a missing node.
func (c *Client) gated(err error, feature string, needs version.Version) error {
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	served := c.Negotiation().Effective
	if served.IsZero() || !served.Less(needs) {
		return err
	}
	return &FeatureVersionError{Feature: feature, Needs: needs, Served: served, Endpoint: c.endpoint, Err: err}
}

// VIF is one virtual network interface attached to a node.
type VIF struct {
	ID string `json:"id"`
}

// ListVIFs lists the VIFs attached to the node's ports and portgroups
// (API 1.28).
func (c *Client) ListVIFs(ctx context.Context, node string) ([]VIF, error) {
	var out struct {
		VIFs []VIF `json:"vifs"`
	}
	_, err := c.do(ctx, http.MethodGet, Nodes.itemPath(node, "vifs"), nil, &out, http.StatusOK)
	if err != nil {
		return nil, c.gated(err, "the node VIF API", VIFsVersion)
	}
	return out.VIFs, nil
}

// AttachVIF attaches the VIF id to a free port or portgroup of the node
// (API 1.28). info holds optional extra keys sent with the id, as Ironic's
// vif_info.
func (c *Client) AttachVIF(ctx context.Context, node, id string, info map[string]any) error {
	body := make(map[string]any, len(info)+1)
	for k, v := range info {
		body[k] = v
	}
	body["id"] = id
	_, err := c.do(ctx, http.MethodPost, Nodes.itemPath(node, "vifs"), body, nil, http.StatusNoContent)
	return c.gated(err, "the node VIF API", VIFsVersion)
}

// DetachVIF detaches the VIF id from the node (API 1.28).
func (c *Client) DetachVIF(ctx context.Context, node, id string) error {
	_, err := c.do(ctx, http.MethodDelete, Nodes.itemPath(node, "vifs", url.PathEscape(id)), nil, nil, http.StatusNoContent)
	return c.gated(err, "the node VIF API", VIFsVersion)
}

// InjectNMI sends a non-maskable interrupt to the node (API 1.29): the
// server answers once the BMC took it.
func (c *Client) InjectNMI(ctx context.Context, node string) error {
	_, err := c.do(ctx, http.MethodPut, Nodes.itemPath(node, "management", "inject_nmi"), map[string]any{}, nil,
		http.StatusNoContent, http.StatusAccepted)
	return c.gated(err, "NMI injection", InjectNMIVersion)
}
