package ipmi

import (
	"testing"

	"github.com/bougou/go-ipmi/pkg/types"
	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/plugins"
)

// SDR threshold sensors become readings by type and unit; other sensors,
// absent ones and unnamed ones are left out.
func TestSensorsFromSDR(t *testing.T) {
	s := func(name string, st types.SensorType, unit types.SensorUnitType, pct bool, v float64, th types.SensorThresholdStatus) *types.Sensor {
		x := &types.Sensor{Name: name, SensorType: st, Value: v}
		x.SensorUnit.BaseUnit, x.SensorUnit.Percentage = unit, pct
		x.Threshold.ThresholdStatus = th
		return x
	}
	absent := s("Gone Temp", types.SensorTypeTemperature, types.SensorUnitType_DegreesC, false, 0, "")
	absent.NotPresent = true
	got := sensorsFromSDR([]*types.Sensor{
		s("CPU Temp", types.SensorTypeTemperature, types.SensorUnitType_DegreesC, false, 48, types.SensorThresholdStatus_OK),
		s("FAN1", types.SensorTypeFan, types.SensorUnitType_RPM, false, 5400, types.SensorThresholdStatus_LNC),
		s("FAN2 Duty", types.SensorTypeFan, types.SensorUnitType_Unspecified, true, 35, ""),
		s("12V", types.SensorTypeVoltage, types.SensorUnitType_Volts, false, 12.1, types.SensorThresholdStatus_UCR),
		s("PS1 Input Power", types.SensorTypePowerSupply, types.SensorUnitType_Watts, false, 230, types.SensorThresholdStatus_OK),
		s("PS1 Current", types.SensorTypeCurrent, types.SensorUnitType_Amps, false, 1.2, types.SensorThresholdStatus_OK),
		s("", types.SensorTypeTemperature, types.SensorUnitType_DegreesC, false, 30, ""),
		absent, nil,
	})
	want := []plugins.Sensor{
		{Type: plugins.SensorTemperature, Name: "CPU Temp", Value: 48, Unit: "Cel", Health: "OK"},
		{Type: plugins.SensorFan, Name: "FAN1", Value: 5400, Unit: "RPM", Health: "Warning"},
		{Type: plugins.SensorFan, Name: "FAN2 Duty", Value: 35, Unit: "Percent"},
		{Type: plugins.SensorVoltage, Name: "12V", Value: 12.1, Unit: "V", Health: "Critical"},
		{Type: plugins.SensorPower, Name: "PS1 Input Power", Value: 230, Unit: "W", Health: "OK"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("sensors (-want +got):\n%s", diff)
	}
}
