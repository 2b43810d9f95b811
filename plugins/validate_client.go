package plugins

import (
	"context"
	"errors"

	"github.com/rivetmetal/rivet/plugins/internal/proto/driverv1"
)

var _ interface {
	Validator
} = (*Client)(nil)

func asError[T error](err error, target *T) bool { return errors.As(err, target) }

// Properties asks the plugin for the driver_info keys it declares;
// ErrNotSupported when it declares none (an older plugin).
func (c *Client) Properties(ctx context.Context) ([]Property, error) {
	if c.validation == nil {
		return nil, ErrNotSupported
	}
	resp, err := c.validation.Properties(ctx, &driverv1.Empty{})
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]Property, 0, len(resp.GetProperties()))
	for _, p := range resp.GetProperties() {
		out = append(out, Property{Name: p.GetName(), Required: p.GetRequired(), Description: p.GetDescription()})
	}
	return out, nil
}

// Validate implements Validator over the plugin's Validation service; a
// failure comes back as a *ValidationError. ErrNotSupported when the plugin
// has no Validate (an older plugin).
func (c *Client) Validate(ctx context.Context, node Node, iface Interface) error {
	if c.validation == nil {
		return ErrNotSupported
	}
	n, err := nodeToProto(node)
	if err != nil {
		return err
	}
	resp, err := c.validation.Validate(ctx, &driverv1.ValidateRequest{Node: n, Interface: string(iface)})
	if err != nil {
		return fromStatus(err)
	}
	return validationError(resp.GetProblem(), resp.GetReason(), resp.GetMissingKeys(), resp.GetInvalidKeys())
}
