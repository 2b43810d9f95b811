package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/rivetmetal/rivet/plugins"
)

var _ plugins.Validator = (*Driver)(nil)

// Validate asks the plugin to validate n for iface. A plugin that does not
// advertise capability validate (one built with an older SDK) answers
// plugins.ErrNotSupported without a round trip: the caller then falls back
// to its own checks.
func (d *Driver) Validate(ctx context.Context, n plugins.Node, iface plugins.Interface) error {
	_, err := validationCall(ctx, d, plugins.CapabilityValidate, "validate "+string(iface), func(c *Client) (none, error) {
		return noValue(c.Validate(ctx, d.node(n), iface))
	})
	return err
}

// Properties asks the plugin for the driver_info keys it declares;
// plugins.ErrNotSupported when it does not advertise capability properties.
func (d *Driver) Properties(ctx context.Context) ([]plugins.Property, error) {
	return validationCall(ctx, d, plugins.CapabilityProperties, "properties", func(c *Client) ([]plugins.Property, error) {
		return c.Properties(ctx)
	})
}

// validationCall is call for the Validation service, which belongs to no
// interface: only the capability is checked.
func validationCall[T any](ctx context.Context, d *Driver, capability plugins.Capability, op string, fn func(c *Client) (T, error)) (T, error) {
	var zero T
	inst, err := d.sup.acquire(ctx)
	if err != nil {
		return zero, err
	}
	if !inst.reg.Has(capability) {
		inst.inflight.Done()
		return zero, fmt.Errorf("driver %s: %s: capability %s not advertised: %w", d.sup.src.Driver, op, capability, plugins.ErrNotSupported)
	}
	v, err := fn(inst.driver)
	if err = d.sup.release(inst, op, err); err != nil {
		if _, crashed := err.(*PluginCrashedError); crashed {
			return zero, err
		}
		var verr *ValidationError
		if errors.As(err, &verr) {
			return zero, err // the driver's reason, as it reads
		}
		return zero, fmt.Errorf("driver %s: %s: %w", d.sup.src.Driver, op, err)
	}
	return v, nil
}
