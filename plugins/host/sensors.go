package host

import (
	"context"
	"fmt"
	"slices"

	"github.com/rivetmetal/rivet/plugins"
)

var _ plugins.SensorReader = (*Driver)(nil)

// GetSensorData implements plugins.SensorReader: the plugin's Sensors
// service (protocol 2), only when it advertised capability sensors, which
// belongs to no hardware interface (as validate and properties). A
// plugin built with an older SDK answers plugins.ErrNotSupported without a
// round trip.
func (d *Driver) GetSensorData(ctx context.Context, n plugins.Node) ([]plugins.Sensor, error) {
	return call(ctx, d, "", plugins.CapabilitySensors, "get sensor data", func(c *Client) ([]plugins.Sensor, error) {
		return c.GetSensorData(ctx, d.node(n))
	})
}

// GetSensorData implements plugins.SensorReader over the Sensors service.
func (c *Client) GetSensorData(ctx context.Context, node plugins.Node) ([]plugins.Sensor, error) {
	caps := c.caps.Load()
	if c.sensors == nil || (caps != nil && !slices.Contains(*caps, plugins.CapabilitySensors)) {
		return nil, fmt.Errorf("get sensor data: the plugin does not serve the Sensors service (protocol %d): %w", c.protocol, plugins.ErrNotSupported)
	}
	req, err := nodeRequest(node)
	if err != nil {
		return nil, err
	}
	resp, err := c.sensors.GetSensorData(ctx, req)
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]plugins.Sensor, 0, len(resp.GetSensors()))
	for _, s := range resp.GetSensors() {
		out = append(out, plugins.Sensor{Type: plugins.SensorType(s.GetType()), Name: s.GetName(), Value: s.GetValue(),
			Unit: s.GetUnit(), Health: s.GetHealth()})
	}
	return out, nil
}
