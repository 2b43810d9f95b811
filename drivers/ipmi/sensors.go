package ipmi

import (
	"context"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/types"

	"github.com/rivetmetal/rivet/plugins"
)

var _ plugins.SensorReader = (*Driver)(nil)

// GetSensorData implements plugins.SensorReader from the BMC's SDR
// repository: every threshold sensor with a valid reading that is a
// temperature, a fan, a voltage, or reads in watts (power supplies, power
// meters). Reading the repository takes several commands per sensor, each
// spaced by [ipmi] min_command_interval, so a BMC with many sensors takes a
// while; [sensors] send_sensor_data_wait_timeout bounds it.
func (d *Driver) GetSensorData(ctx context.Context, node plugins.Node) ([]plugins.Sensor, error) {
	var raw []*types.Sensor
	_, err := d.do(ctx, node, "get sensor data", func(ctx context.Context, c *client.Client) error {
		s, err := c.GetSensors(ctx, client.SensorFilterOptionIsThreshold, client.SensorFilterOptionIsReadingValid)
		raw = s
		return err
	})
	if err != nil {
		return nil, err
	}
	return sensorsFromSDR(raw), nil
}

// sensorsFromSDR keeps the readings Rivet exposes, in the SDR's order.
func sensorsFromSDR(raw []*types.Sensor) []plugins.Sensor {
	var out []plugins.Sensor
	for _, s := range raw {
		if s == nil || s.NotPresent || s.ScanningDisabled {
			continue
		}
		x := plugins.Sensor{Name: s.Name, Value: s.Value, Health: thresholdHealth(s.Threshold.ThresholdStatus)}
		switch {
		case s.SensorType == types.SensorTypeTemperature:
			x.Type, x.Unit = plugins.SensorTemperature, "Cel"
		case s.SensorType == types.SensorTypeFan && s.SensorUnit.Percentage:
			x.Type, x.Unit = plugins.SensorFan, "Percent"
		case s.SensorType == types.SensorTypeFan:
			x.Type, x.Unit = plugins.SensorFan, "RPM"
		case s.SensorType == types.SensorTypeVoltage:
			x.Type, x.Unit = plugins.SensorVoltage, "V"
		case s.SensorUnit.BaseUnit == types.SensorUnitType_Watts:
			x.Type, x.Unit = plugins.SensorPower, "W"
		default:
			continue
		}
		if x.Name == "" {
			continue
		}
		out = append(out, x)
	}
	return out
}

// thresholdHealth maps a threshold status to Redfish's health words.
func thresholdHealth(st types.SensorThresholdStatus) string {
	switch st {
	case "":
		return ""
	case types.SensorThresholdStatus_OK:
		return "OK"
	case types.SensorThresholdStatus_LNC, types.SensorThresholdStatus_UNC:
		return "Warning"
	}
	return "Critical"
}
